"""Record a hand-written attention kernel's reads and writes for `attn-trace grade`.

Standard library only; numpy arrays work where plain lists do, but numpy is never required.

    from attn_record import load_inputs, Recorder

    inp = load_inputs()                    # path: argument, else $ATTN_TRACE_INPUTS, else sys.argv[1]
    with Recorder(inp) as rec:             # path: argument, else $ATTN_TRACE_OUT, else sys.argv[2]
        q = rec.input("q")                 # a given tensor, wrapped under our buffer name
        scores = rec.zeros("scores", n)    # a buffer the kernel computes
        rec.phase("scores")                # optional: tag the events that follow
        s = q[q_base + d] * k[k_base + d]  # each q[...] records a read, with this file and line
        scores[off] = s                    # records a write
        d_k[off] += s                      # records a read of the old value, then a write

Each access becomes one line of the trace (JSON Lines, format "attn-trace-trace" version 1):

    {"op":"read","buffer":"q","offset":10,"value":0.25,"file":"attention.py","line":42}

An offset outside the buffer is recorded as given and never touches memory: such a read returns
0.0 and such a write is dropped, so `attn-trace grade` can point at the line that made it.
Temporaries that are not wrapped (plain lists, locals) are not recorded.
"""

import atexit
import operator
import os
import sys

__all__ = ["Inputs", "InputsError", "Buffer", "Recorder", "load_inputs"]

INPUTS_FORMAT = "attn-trace-inputs"
TRACE_FORMAT = "attn-trace-trace"
VERSION = 1

# `sys._getframe(1)` is the frame of whoever indexed the buffer: the learner's line
_getframe = sys._getframe


class InputsError(ValueError):
    """An inputs file that cannot be read: the message names the file and line."""


class Inputs:
    """An inputs file, parsed.

    scenario, variant, pass_, input: the header (pass_ because `pass` is a keyword);
    dims: {"B": 1, "T": 3, ...}; params: {"causal": 1, "scale": 0.707..., ...};
    tensors: {"x": [floats], ...} flat, row-major; shapes: {"x": [B, T, C], ...}.
    """

    def __init__(self):
        self.scenario = None
        self.variant = None
        self.pass_ = None
        self.input = 0
        self.dims = {}
        self.params = {}
        self.tensors = {}
        self.shapes = {}

    def dim(self, name, default=None):
        """A dimension by name (B, T, C, H, D, H_kv, S), or `default` when the file has none."""
        return self.dims.get(name, default)

    def __repr__(self):
        return "Inputs(%s, variant=%s, pass=%s, input=%d, tensors=%s)" % (
            self.scenario, self.variant, self.pass_, self.input, sorted(self.tensors))


def _number(token):
    """A parameter: an int when written as one (causal 1), else a float (scale 0.7071)."""
    try:
        return int(token)
    except ValueError:
        return float(token)


def _untoken(token):
    """A path written as one token: every %XX (a space, a newline, a % itself) back to its byte."""
    out = bytearray()
    k = 0
    while k < len(token):
        h = token[k + 1:k + 3]
        if token[k] == "%" and len(h) == 2 and all(c in "0123456789abcdefABCDEF" for c in h):
            out.append(int(h, 16))
            k += 3
        else:
            out.extend(token[k].encode("utf-8"))
            k += 1
    return out.decode("utf-8", "replace")


def load_inputs(path=None):
    """Read an inputs file written by `attn-trace inputs`.

    The path is `path`, else $ATTN_TRACE_INPUTS (set by `attn-trace grade ... -- COMMAND`),
    else the program's first argument.
    """
    if path is None:
        path = os.environ.get("ATTN_TRACE_INPUTS") or (sys.argv[1] if len(sys.argv) > 1 else None)
    if not path:
        raise InputsError("no inputs file: pass its path, set ATTN_TRACE_INPUTS, "
                          "or give it as the program's first argument")
    with open(path, encoding="utf-8") as f:
        return parse_inputs(f.read(), str(path))


def parse_inputs(text, where="<inputs>"):
    """Parse the text of an inputs file; `where` names it in error messages."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    inp = Inputs()
    n = 0  # index of the next line to read

    def fail(lineno, msg):
        raise InputsError("%s:%d: %s" % (where, lineno, msg))

    def words():
        """The next line that is not blank or a comment, as (line number, tokens); a `#`
        token ends the line, so header lines may carry trailing comments."""
        nonlocal n
        while n < len(lines):
            n += 1
            toks = lines[n - 1].split()
            for k, t in enumerate(toks):
                if t.startswith("#"):
                    toks = toks[:k]
                    break
            if toks:
                return n, toks
        return n, None

    lineno, toks = words()
    if toks is None or toks[0] != INPUTS_FORMAT:
        fail(lineno, "not an attn-trace inputs file (it starts with %r, not %r)"
             % (" ".join(toks or []), INPUTS_FORMAT))
    if len(toks) != 2 or toks[1] != str(VERSION):
        fail(lineno, "inputs format version %s; this recorder reads version %d"
             % (" ".join(toks[1:]) or "missing", VERSION))
    while True:
        lineno, toks = words()
        if toks is None:
            fail(lineno, "no `end` line: the file is cut short")
        key = toks[0]
        if key == "end":
            return inp
        if key in ("scenario", "variant", "pass", "input") and len(toks) != 2:
            fail(lineno, "expected `%s VALUE`" % key)
        if key == "scenario":
            inp.scenario = _untoken(toks[1])  # a path with spaces is written as one token
        elif key == "variant":
            inp.variant = toks[1]
        elif key == "pass":
            inp.pass_ = toks[1]
        elif key == "input":
            inp.input = int(toks[1])
        elif key == "dim":
            if len(toks) != 3:
                fail(lineno, "expected `dim NAME SIZE`")
            inp.dims[toks[1]] = int(toks[2])
        elif key == "param":
            if len(toks) != 3:
                fail(lineno, "expected `param NAME NUMBER`")
            inp.params[toks[1]] = _number(toks[2])
        elif key == "tensor":
            try:
                name, count, rank = toks[1], int(toks[2]), int(toks[3])
                shape = [int(t) for t in toks[4:]]
            except (IndexError, ValueError):
                fail(lineno, "expected `tensor NAME COUNT RANK DIM0 ...`")
            if len(shape) != rank:
                fail(lineno, "tensor %s: rank %d but %d dimensions" % (name, rank, len(shape)))
            # the numbers are the whole next line (an empty tensor may have an empty line)
            if n >= len(lines):
                fail(lineno, "tensor %s: its numbers are missing" % name)
            n += 1
            try:
                data = [float(t) for t in lines[n - 1].split()]
            except ValueError as e:
                fail(n, "tensor %s: %s" % (name, e))
            if len(data) != count:
                fail(n, "tensor %s: %d numbers, the header says %d" % (name, len(data), count))
            inp.tensors[name] = data
            inp.shapes[name] = shape
        else:
            fail(lineno, "unknown line %r" % key)


def _json_string(s):
    """`s` as a JSON string literal: only quotes, backslashes and control characters need it."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch < " ":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)



class Buffer:
    """A flat buffer whose every access is recorded; made by `Recorder.buffer` or `.zeros`.

    `buf[off]` records a read, `buf[off] = v` a write, `buf[off] += v` both. `len(buf)` is the
    number of elements; `buf.data` is the wrapped list or array (reading it is not recorded).
    """

    __slots__ = ("name", "data", "_n", "_rec", "_read", "_write", "_readback")

    def __init__(self, rec, name, data):
        self.name = name
        self.data = data
        self._n = len(data)
        self._rec = rec
        nm = _json_string(name)
        # everything before the offset, formatted once
        self._read = '{"op":"read","buffer":%s,"offset":' % nm
        self._write = '{"op":"write","buffer":%s,"offset":' % nm
        # a numpy float32 array rounds what is stored: record what memory then holds
        self._readback = not isinstance(data, list)

    def __len__(self):
        return self._n

    def __repr__(self):
        return "Buffer(%r, %d elements)" % (self.name, self._n)

    def __getitem__(self, off):
        if type(off) is not int:
            if isinstance(off, slice):
                f = _getframe(1)
                return [self._get(k, f) for k in range(*off.indices(self._n))]
            off = int(operator.index(off))  # numpy integers, bools: a plain int
        # the common case inlined (it runs once per event): read, then record
        frame = _getframe(1)
        v = self.data[off] if 0 <= off < self._n else 0.0
        rec = self._rec
        if rec._slow:
            rec._event(self._read, off, v, frame)
            return v
        fname = rec._files.get(frame.f_code.co_filename) or rec._file(frame.f_code.co_filename)
        r = repr(float(v))
        if r[-1] in "nf":  # finite reprs end in a digit; nan, inf and -inf in a letter
            r = '"' + r + '"'
        lines = rec._lines
        lines.append(f'{self._read}{off},"value":{r},"file":{fname},"line":{frame.f_lineno}{rec._tail}')
        if len(lines) >= FLUSH_EVERY:
            rec._drain()
        return v

    def __setitem__(self, off, v):
        if type(off) is not int:
            if isinstance(off, slice):
                f = _getframe(1)
                ks = range(*off.indices(self._n))
                vs = list(v)
                if len(vs) != len(ks):
                    raise ValueError("%s[%s]: %d values for %d elements" % (self.name, off, len(vs), len(ks)))
                for k, x in zip(ks, vs):
                    self._set(k, x, f)
                return
            off = int(operator.index(off))  # numpy integers, bools: a plain int
        frame = _getframe(1)
        if 0 <= off < self._n:
            data = self.data
            data[off] = v
            if self._readback:
                v = data[off]
        rec = self._rec
        if rec._slow:
            rec._event(self._write, off, v, frame)
            return
        fname = rec._files.get(frame.f_code.co_filename) or rec._file(frame.f_code.co_filename)
        r = repr(float(v))
        if r[-1] in "nf":
            r = '"' + r + '"'
        lines = rec._lines
        lines.append(f'{self._write}{off},"value":{r},"file":{fname},"line":{frame.f_lineno}{rec._tail}')
        if len(lines) >= FLUSH_EVERY:
            rec._drain()

    def __iter__(self):
        # without this, `for x in buf` would index past the end forever (out of bounds reads
        # return 0.0 instead of raising IndexError); the caller is the frame that calls next()
        for k in range(self._n):
            yield self._get(k, _getframe(1))

    def _get(self, off, frame):
        v = self.data[off] if 0 <= off < self._n else 0.0
        self._rec._event(self._read, off, v, frame)
        return v

    def _set(self, off, v, frame):
        if 0 <= off < self._n:
            data = self.data
            data[off] = v
            if self._readback:
                v = data[off]
        self._rec._event(self._write, off, v, frame)


# events are formatted into a list and written this many at a time
FLUSH_EVERY = 8192


class Recorder:
    """Writes the trace: the header line at once (the inputs' scenario, variant, pass, input and
    dims), then one line per access.

    `path`: the trace file, else $ATTN_TRACE_OUT (set by `attn-trace grade ... -- COMMAND`), else
    the program's second argument. `vars`: names of loop variables (e.g. ("bb", "hh", "i", "j"))
    to copy from the caller's locals into each event's "vars"; off by default, as it is slower.
    The trace is flushed by `close()`, at the end of a `with` block, and at interpreter exit.
    """

    def __init__(self, inputs, path=None, vars=None):
        if path is None:
            path = os.environ.get("ATTN_TRACE_OUT") or (sys.argv[2] if len(sys.argv) > 2 else None)
        if not path:
            raise ValueError("no trace file: pass its path, set ATTN_TRACE_OUT, "
                             "or give it as the program's second argument")
        self.inputs = inputs
        self.path = str(path)
        self._out = open(self.path, "w", encoding="utf-8")
        self._lines = []
        self._files = {}  # co_filename -> its JSON string
        self._tail = "}\n"  # what closes each event: the phase, if one is set
        self._vars = tuple(vars) if vars else ()
        self._closed = False
        # take the slow path of `_event` (loop variables to copy, or closed)
        self._slow = bool(self._vars)
        # the sizes too, so a trace recorded on another scenario's shapes is told apart
        dims = ",".join("%s:%d" % (_json_string(k), v) for k, v in inputs.dims.items())
        header = '{"format":"%s","version":%d,"scenario":%s,"variant":%s,"pass":%s,"input":%d,"dims":{%s}}\n' % (
            TRACE_FORMAT, VERSION, _json_string(inputs.scenario or ""), _json_string(inputs.variant or ""),
            _json_string(inputs.pass_ or ""), int(inputs.input), dims)
        self._out.write(header)
        atexit.register(self.close)

    # buffers

    def buffer(self, name, data):
        """Wrap `data` (a list, array.array or numpy array, flat) as our buffer `name`."""
        return Buffer(self, name, data)

    def zeros(self, name, n):
        """A new buffer of `n` zeros (a list of floats) named `name`."""
        return Buffer(self, name, [0.0] * n)

    def input(self, name):
        """The inputs file's tensor `name`, wrapped under that name (a KeyError if absent)."""
        tensors = self.inputs.tensors
        if name not in tensors:
            raise KeyError("the inputs file has no tensor %r (it has %s)" % (name, ", ".join(tensors) or "none"))
        return Buffer(self, name, tensors[name])

    # events

    def phase(self, name):
        """Tag the events that follow with our phase `name` (e.g. "scores"); None stops tagging."""
        self._tail = '}\n' if name is None else ',"phase":%s}\n' % _json_string(name)

    def _file(self, filename):
        """The JSON string of a source file's name, made once per file."""
        js = self._files[filename] = _json_string(filename)
        return js

    def _event(self, head, off, v, frame):
        """Record one access (`head` is the buffer's line up to the offset)."""
        if self._closed:
            raise ValueError("attn_record: an access after the recorder was closed")
        fname = self._files.get(frame.f_code.co_filename) or self._file(frame.f_code.co_filename)
        r = repr(float(v))
        if r[-1] in "nf":
            r = '"' + r + '"'
        tail = self._with_vars(frame) if self._vars else self._tail
        lines = self._lines
        lines.append(f'{head}{off},"value":{r},"file":{fname},"line":{frame.f_lineno}{tail}')
        if len(lines) >= FLUSH_EVERY:
            self._drain()

    def _drain(self):
        self._out.write("".join(self._lines))
        self._lines.clear()

    def _with_vars(self, frame):
        loc = frame.f_locals
        got = ['"%s":%d' % (k, loc[k]) for k in self._vars if type(loc.get(k)) is int]
        if not got:
            return self._tail
        return ',"vars":{%s}%s' % (",".join(got), self._tail)

    # closing

    def flush(self):
        """Write out every event recorded so far."""
        self._drain()
        self._out.flush()

    def close(self):
        if self._closed:
            return
        self.flush()
        self._out.close()
        self._closed = self._slow = True
        atexit.unregister(self.close)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
