"""Record a hand-written attention kernel's reads and writes for `attn-trace grade`.

The inputs and trace formats are documented in docs/your_kernel.md of the attn-trace repository.
Standard library only; numpy arrays work where plain lists do, but numpy is never required.
Install with `pip install ./recorders` (from the repository's root), or put recorders/ on PYTHONPATH.

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

Vectorised numpy code wraps its arrays with their shapes (`rec.array("q")`, `rec.zeros("att",
(B, T, C))`): a slice, a fancy index, `np.asarray(buf)` or an operator (`x @ w`) then records a
read of every element it touches, and a slice assignment a write of every element it sets, at the
line that did it. The offset of an element is its row-major position in the array.

Buffers named otherwise than ours, or laid out otherwise, are declared with `rec.bind(...)`
before the first access; the header then carries the bindings.
"""

import atexit
import json
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


def _check_view(buffer, view):
    """One view of a binding, checked for its form (the grader checks it against the shapes)."""
    if not isinstance(view, dict):
        raise ValueError("attn_record: bind(%r): a view is a dict with tensor, offset, strides and slice, not %r"
                         % (buffer, view))
    unknown = sorted(set(view) - {"tensor", "offset", "strides", "slice"})
    if unknown:
        raise ValueError("attn_record: bind(%r): unknown key %r in a view" % (buffer, unknown[0]))
    tensor = view.get("tensor")
    if not isinstance(tensor, str) or not tensor:
        raise ValueError("attn_record: bind(%r): a view needs the name of our tensor" % buffer)

    def size(what, v):
        """A whole number >= 0, or an expression over the sizes such as "3*C" (the grader
        evaluates it)."""
        if isinstance(v, str) and v.strip():
            return v
        try:
            n = operator.index(v)
        except TypeError:
            n = -1
        if n < 0:
            raise ValueError("attn_record: bind(%r): %s of %s must be a whole number >= 0 or an expression "
                             "such as \"3*C\", not %r" % (buffer, what, tensor, v))
        return n

    out = {"tensor": tensor, "offset": size("the offset", view.get("offset", 0))}
    # without strides, the view is our tensor in our own layout, at its offset
    if "strides" in view:
        strides = view["strides"]
        if not isinstance(strides, dict):
            raise ValueError("attn_record: bind(%r): the strides of %s are a dict {dim: stride}" % (buffer, tensor))
        out["strides"] = {str(d): size("the stride of " + str(d), x) for d, x in strides.items()}
    if "slice" in view:
        cut = view["slice"]
        if not isinstance(cut, dict) or not all(isinstance(r, (list, tuple)) and len(r) == 2 for r in cut.values()):
            raise ValueError("attn_record: bind(%r): the slice of %s is a dict {dim: (from, to)}" % (buffer, tensor))
        out["slice"] = {str(d): [size("the slice of " + str(d), lo), size("the slice of " + str(d), hi)]
                        for d, (lo, hi) in cut.items()}
    return out


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



def _is_ndarray(data):
    """Is `data` a numpy array (or another array with numpy's interface)? Tested without
    importing numpy, which this module never needs."""
    return hasattr(data, "__array_interface__") and hasattr(data, "reshape") and hasattr(data, "ndim")


class Buffer:
    """A buffer whose every access is recorded; made by `Recorder.buffer`, `.zeros`, `.input` or
    `.array`.

    Flat (a list, or a one-dimensional array): `buf[off]` records a read, `buf[off] = v` a write,
    `buf[off] += v` both, and an offset outside the buffer is recorded as given. A slice reads or
    writes each element in turn.

    A numpy array of any shape also follows numpy's indexing: `buf[i, :, 2:4]`, `buf[idx]` with
    integer or boolean arrays, `buf[...]`, and `buf[key] = values` (broadcast) record one event
    per element touched, in row-major order, at the flat row-major offset of each element; a read
    returns a copy, so changing it changes nothing in the buffer. Numpy's rules hold there: a
    slice stops at the end, an index past it raises IndexError. `np.asarray(buf)` and the
    operators (`buf @ w`, `buf * 2`, `buf.T`, ...) read the whole buffer.

    `len(buf)` is the number of elements; `buf.shape` its shape; `buf.data` is the wrapped list or
    array (reading it is not recorded).
    """

    __slots__ = ("name", "data", "_n", "_rec", "_read", "_write", "_readback", "_np", "_index")

    # numpy consults this before its own operators, so `array @ buf` asks `buf.__rmatmul__`
    __array_priority__ = 1000

    def __init__(self, rec, name, data):
        self.name = name
        self.data = data
        self._rec = rec
        self._np = _is_ndarray(data)
        if self._np and not data.flags["C_CONTIGUOUS"]:
            raise ValueError("attn_record: buffer %r: the array is not contiguous in row-major order "
                             "(wrap np.ascontiguousarray(a), whose offsets are its elements' positions)" % name)
        self._n = int(data.size) if self._np else len(data)
        self._index = None  # the offsets of a shaped array, made at its first numpy-style access
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

    @property
    def shape(self):
        return tuple(self.data.shape) if self._np else (self._n,)

    @property
    def ndim(self):
        return len(self.shape)

    def __getitem__(self, off):
        if type(off) is not int:
            if self._np and not (self.data.ndim == 1 and _is_integer(off)):
                return self._np_get(off, _learner_frame())
            if isinstance(off, slice):
                f = _getframe(1)
                return [self._get(k, f) for k in range(*off.indices(self._n))]
            off = int(operator.index(off))  # numpy integers, bools: a plain int
        elif self._np and self.data.ndim != 1:
            return self._np_get(off, _learner_frame())
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
            if self._np and not (self.data.ndim == 1 and _is_integer(off)):
                self._np_set(off, v, _learner_frame())
                return
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
        elif self._np and self.data.ndim != 1:
            self._np_set(off, v, _learner_frame())
            return
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
        # return 0.0 instead of raising IndexError); the caller is the frame that calls next().
        # A shaped array yields its rows, as numpy does.
        if self._np and self.data.ndim != 1:
            for k in range(self.data.shape[0]):
                yield self._np_get(k, _learner_frame())
            return
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

    # numpy-style access: one event per element, at its row-major offset

    def _offsets(self, key):
        """The flat offsets of the elements `data[key]` selects, in the same shape."""
        if self._index is None:
            import numpy as np  # the data is an array, so numpy is there
            self._index = np.arange(self._n).reshape(self.data.shape)
        return self._index[key]

    def _np_get(self, key, frame):
        """Read `data[key]`, recording each element; a copy, so the buffer is only read."""
        vals = self.data[key]
        offs = self._offsets(key)
        if _is_ndarray(vals):
            vals = vals.copy()
            self._rec._events(self._read, offs.ravel().tolist(), vals.ravel().tolist(), frame)
        else:
            self._rec._event(self._read, int(offs), vals, frame)
        return vals

    def _np_set(self, key, v, frame):
        """Write `v` into `data[key]` (numpy broadcasts it), recording what each element then holds."""
        data = self.data
        data[key] = v
        offs, vals = self._offsets(key), data[key]
        if _is_ndarray(vals):
            self._rec._events(self._write, offs.ravel().tolist(), vals.ravel().tolist(), frame)
        else:
            self._rec._event(self._write, int(offs), vals, frame)

    def _whole(self, frame):
        """Every element read, as an array of the buffer's shape (numpy only)."""
        if not self._np:
            raise TypeError("attn_record: buffer %r wraps a list; wrap a numpy array for whole-array "
                            "operations" % self.name)
        return self._np_get(Ellipsis, frame)

    def __array__(self, dtype=None, copy=None):
        a = self._whole(_learner_frame())
        return a if dtype is None else a.astype(dtype)

    @property
    def T(self):
        return self._whole(_learner_frame()).T

    def _binary(self, other, op, reflected=False):
        """`self op other` on the whole buffer (and the whole of `other` if it is a buffer too),
        read at the learner's line."""
        frame = _learner_frame(2)
        a = self._whole(frame)
        b = other._whole(frame) if isinstance(other, Buffer) else other
        return op(b, a) if reflected else op(a, b)

    def __matmul__(self, other):
        return self._binary(other, operator.matmul)

    def __rmatmul__(self, other):
        return self._binary(other, operator.matmul, True)

    def __add__(self, other):
        return self._binary(other, operator.add)

    def __radd__(self, other):
        return self._binary(other, operator.add, True)

    def __sub__(self, other):
        return self._binary(other, operator.sub)

    def __rsub__(self, other):
        return self._binary(other, operator.sub, True)

    def __mul__(self, other):
        return self._binary(other, operator.mul)

    def __rmul__(self, other):
        return self._binary(other, operator.mul, True)

    def __truediv__(self, other):
        return self._binary(other, operator.truediv)

    def __rtruediv__(self, other):
        return self._binary(other, operator.truediv, True)

    def __neg__(self):
        return -self._whole(_learner_frame())


# the source files whose frames are never the learner's line: this module's and numpy's
_SKIP = {__file__: True}


def _skipped(filename):
    skip = _SKIP.get(filename)
    if skip is None:
        np = sys.modules.get("numpy")
        root = os.path.dirname(np.__file__) + os.sep if np is not None and np.__file__ else None
        skip = _SKIP[filename] = bool(root) and filename.startswith(root)
    return skip


def _learner_frame(depth=2):
    """The frame of the learner's code that caused this access: the caller of the Buffer method
    that called this (`depth` frames up), or further up past numpy's functions (np.split(buf, ...)
    reads the buffer from inside numpy)."""
    f = _getframe(depth)
    while f.f_back is not None and _skipped(f.f_code.co_filename):
        f = f.f_back
    return f


def _is_integer(key):
    """An integer index (int, numpy integer, bool), not a slice, tuple or array."""
    if isinstance(key, (slice, tuple, list)) or key is Ellipsis or key is None:
        return False
    try:
        operator.index(key)
    except TypeError:
        return False
    return True


# events are formatted into a list and written this many at a time
FLUSH_EVERY = 8192


class Recorder:
    """Writes the trace: the header line (the inputs' scenario, variant, pass, input and dims, and
    the bindings if any), then one line per access.

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
        # the header is written with the first events, so bindings declared before them join it
        self._bind = {}
        self._header_written = False
        atexit.register(self.close)

    def _header(self):
        inputs = self.inputs
        # the sizes too, so a trace recorded on another scenario's shapes is told apart
        dims = ",".join("%s:%d" % (_json_string(k), v) for k, v in inputs.dims.items())
        bind = ',"bind":%s' % json.dumps(self._bind, separators=(",", ":")) if self._bind else ""
        return '{"format":"%s","version":%d,"scenario":%s,"variant":%s,"pass":%s,"input":%d,"dims":{%s}%s}\n' % (
            TRACE_FORMAT, VERSION, _json_string(inputs.scenario or ""), _json_string(inputs.variant or ""),
            _json_string(inputs.pass_ or ""), int(inputs.input), dims, bind)

    # buffers

    def buffer(self, name, data):
        """Wrap `data` (a list, array.array or numpy array of any shape) as buffer `name`."""
        return Buffer(self, name, data)

    def zeros(self, name, n):
        """A new buffer named `name`: `n` zeros (a list of floats), or with a shape (a tuple such
        as (B, T, C)) a numpy float32 array of zeros."""
        if isinstance(n, (tuple, list)):
            import numpy as np
            return Buffer(self, name, np.zeros(tuple(n), dtype=np.float32))
        return Buffer(self, name, [0.0] * n)

    def input(self, name):
        """The inputs file's tensor `name`, wrapped under that name (a KeyError if absent)."""
        return Buffer(self, name, self._given(name))

    def array(self, name, dtype="float32"):
        """The inputs file's tensor `name` as a numpy array of its shape (`q` is [B, S, H, D], as
        the inputs file's comment says), wrapped under that name."""
        import numpy as np
        data = np.array(self._given(name), dtype=dtype).reshape(self.inputs.shapes[name])
        return Buffer(self, name, data)

    def _given(self, name):
        tensors = self.inputs.tensors
        if name not in tensors:
            raise KeyError("the inputs file has no tensor %r (it has %s)" % (name, ", ".join(tensors) or "none"))
        return tensors[name]

    # bindings

    def bind(self, buffer, views=None, **by_tensor):
        """Declare how your buffer `buffer` maps onto our tensors (docs/your_kernel.md, bindings).

            rec.bind("preatt", "scores")              # a rename: our layout, another name
            rec.bind("inp", q=dict(offset=0, strides=dict(b=3 * T * C, i=3 * C, h=D, d=1)),
                            k=dict(offset=C, strides=dict(b=3 * T * C, j=3 * C, h=D, d=1)))
            rec.bind("Q", [dict(tensor="q", offset=0, strides=dict(b=H * T * D, h=T * D, i=D, d=1))])
            rec.bind("qkv_w", w_qkv=dict(strides=dict(c=1, o="C"), slice=dict(o=(0, "C"))))

        Each view says where cell `idx` of our tensor lies in your buffer: offset + the sum over
        the dimensions of (idx[dim] - from[dim]) * strides[dim], for the cells its optional slice
        {dim: (from, to)} keeps. Offsets, strides and slice bounds are whole numbers or expressions
        over the sizes ("3*C"); without strides a view is our own layout. Bindings go into the
        trace's header, so they must come before the first access.
        """
        if self._header_written or self._lines:
            raise ValueError("attn_record: bind(%r) after the first access: declare bindings first" % (buffer,))
        if not isinstance(buffer, str) or not buffer:
            raise ValueError("attn_record: bind: the buffer's name must be a non-empty string, not %r" % (buffer,))
        if isinstance(views, str):
            if by_tensor:
                raise ValueError("attn_record: bind(%r, %r): a rename takes no views besides" % (buffer, views))
            self._bind[buffer] = views
            return
        listed = list(views or [])
        for t, view in by_tensor.items():
            listed.append(dict(view, tensor=t) if isinstance(view, dict) else view)
        if not listed:
            raise ValueError("attn_record: bind(%r): no view given" % buffer)
        checked = []
        for view in listed:
            checked.append(_check_view(buffer, view))
        self._bind[buffer] = checked

    # events

    def at(self, **index):
        """Say which index the scratch dimensions of your buffers hold from here on (a binding's
        stride 0: one row of scores reused for every query, say): `rec.at(i=pos)` before the
        row's accesses. Written as a trace line {"op":"at","index":{"i":3}}."""
        if self._closed:
            raise ValueError("attn_record: at() after the recorder was closed")
        got = []
        for dim, v in index.items():
            try:
                n = operator.index(v)
            except TypeError:
                n = -1
            if n < 0:
                raise ValueError("attn_record: at(%s=%r): an index is a whole number >= 0" % (dim, v))
            got.append("%s:%d" % (_json_string(dim), n))
        if not got:
            raise ValueError("attn_record: at(): name at least one dimension, e.g. at(i=3)")
        self._lines.append('{"op":"at","index":{%s}}\n' % ",".join(got))

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

    def _events(self, head, offs, vals, frame):
        """Record accesses at `offs` with values `vals` (lists of one length), all at `frame`."""
        if self._closed:
            raise ValueError("attn_record: an access after the recorder was closed")
        fname = self._files.get(frame.f_code.co_filename) or self._file(frame.f_code.co_filename)
        tail = self._with_vars(frame) if self._vars else self._tail
        at = ',"file":%s,"line":%d%s' % (fname, frame.f_lineno, tail)
        lines = self._lines
        for off, v in zip(offs, vals):
            r = repr(float(v))
            if r[-1] in "nf":
                r = '"' + r + '"'
            lines.append(f'{head}{off},"value":{r}{at}')
        if len(lines) >= FLUSH_EVERY:
            self._drain()

    def _drain(self):
        if not self._header_written:
            self._out.write(self._header())
            self._header_written = True
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
