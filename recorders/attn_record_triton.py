"""Record Triton kernels run by Triton's interpreter (TRITON_INTERPRET=1) for `attn-trace grade`.

The trace format is documented in docs/your_kernel.md of the attn-trace repository (section
"Triton"). Needs triton and numpy; torch is optional: a kernel's arguments may be torch tensors or
this module's numpy-backed `Tensor`s, which Triton's interpreter takes as it takes torch's.

    from attn_record import load_inputs, Recorder
    from attn_record_triton import TritonRecorder     # before any @triton.jit: it turns the
    import triton, triton.language as tl               # interpreter on (TRITON_INTERPRET=1)

    inp = load_inputs()
    with Recorder(inp) as rec, TritonRecorder(rec) as tt:
        q = tt.input("q")                  # the inputs' q, [B, S, H, D], as a kernel argument
        att = tt.zeros("att", q.shape)     # a buffer the kernels compute
        my_kernel[grid](q, att, ...)       # every tl.load / tl.store of them is recorded

Each `tl.load` and `tl.store` (of a tensor of pointers, or through a tensor descriptor) is
recorded lane by lane, in row-major order of the block, with the file and line of the call in
your kernel; a lane its mask turns off is not recorded. An address is mapped back to the buffer
that holds it, as the element offset from the buffer's first element. Memory a kernel reaches
outside every buffer it was given is never touched: a load returns 0 there, a store is dropped,
and the access is recorded against the buffer the call's other lanes use (or the nearest), at the
offset your pointer arithmetic computed, so `attn-trace grade` reports it as out of bounds. The
buffers made here (`input`, `zeros`) have a gap as large as themselves on each side, so a read just
past one is not taken for a read of the next; torch tensors have no such gap.
Atomic read-modify-writes (tl.atomic_add, ...) record a read of the old value and a write of the
new one. Tensors passed to a kernel without being named here (`tt.input`, `tt.zeros`,
`tt.watch`) are your own scratch memory: their accesses run but are not recorded.
"""

import os

# Triton reads this when a kernel is defined (`@triton.jit`) and when it is launched: set it
# before either, unless the learner chose otherwise (then TritonRecorder refuses to start)
os.environ.setdefault("TRITON_INTERPRET", "1")

import sys  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["Tensor", "TritonRecorder"]


class _Dtype:
    """The element type of a `Tensor`, as Triton's interpreter asks it of a torch dtype."""

    __slots__ = ("np",)

    def __init__(self, np_dtype):
        self.np = np.dtype(np_dtype)

    @property
    def itemsize(self):
        return self.np.itemsize

    @property
    def is_floating_point(self):
        return self.np.kind == "f"

    def __str__(self):
        # Triton maps the type name after the last dot: "float32" is fp32, "int32" i32, ...
        return self.np.name

    def __repr__(self):
        return "attn_record_triton.%s" % self.np.name

    def __eq__(self, other):
        return isinstance(other, _Dtype) and other.np == self.np

    def __hash__(self):
        return hash(self.np)


class _Storage:
    """The memory under a `Tensor`: the root array of its views."""

    __slots__ = ("root",)

    def __init__(self, root):
        self.root = root

    def data_ptr(self):
        return self.root.ctypes.data

    def nbytes(self):
        return self.root.nbytes

    def cpu(self):
        return self  # already host memory: the interpreter runs on it in place

    def copy_(self, other):
        # the interpreter copies a kernel's results back from the host: they are already here
        if other.data_ptr() != self.data_ptr():
            np.copyto(self.root, other.root)
        return self


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class Tensor:
    """A numpy array that Triton's interpreter takes as a kernel argument, as it takes a torch
    tensor: `data_ptr()`, `shape`, `stride()`, `dtype`, views by indexing, `reshape`/`view`,
    `transpose`, `permute`. `numpy()` is the array itself (a view: no copy, nothing recorded).
    """

    __slots__ = ("a",)

    def __init__(self, a):
        if not isinstance(a, np.ndarray):
            a = np.asarray(a)
        if any(s < 0 for s in a.strides):
            raise ValueError("attn_record_triton: a Tensor's strides must not be negative")
        self.a = a

    # what Triton's interpreter asks of a tensor argument

    def data_ptr(self):
        return self.a.ctypes.data

    @property
    def dtype(self):
        return _Dtype(self.a.dtype)

    @property
    def shape(self):
        return tuple(self.a.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.a.shape[dim]

    def stride(self, dim=None):
        strides = tuple(s // self.a.itemsize for s in self.a.strides)
        return strides if dim is None else strides[dim]

    def dim(self):
        return self.a.ndim

    def numel(self):
        return int(self.a.size)

    def element_size(self):
        return self.a.itemsize

    def untyped_storage(self):
        return _Storage(_root(self.a))

    def storage_offset(self):
        return (self.data_ptr() - _root(self.a).ctypes.data) // self.a.itemsize

    def new_empty(self, *size, device=None):
        # the interpreter makes a host tensor this way, then points it at the storage with set_:
        # ours is already on the host, so it is this very tensor
        return Tensor(self.a)

    def set_(self, storage=None, offset=None, size=None, stride=None):
        return self

    def is_contiguous(self):
        return bool(self.a.flags["C_CONTIGUOUS"])

    @property
    def device(self):
        return "cpu"

    def cpu(self):
        return self

    def contiguous(self):
        return self if self.is_contiguous() else Tensor(np.ascontiguousarray(self.a))

    # views, as torch makes them

    def __getitem__(self, key):
        return Tensor(self.a[key])

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        view = self.a.view()
        try:
            view.shape = shape  # raises rather than copy: a view of the same memory, or nothing
        except AttributeError as e:
            raise ValueError("attn_record_triton: reshape of a non-contiguous view: %s" % e) from None
        return Tensor(view)

    view = reshape

    def transpose(self, d0, d1):
        return Tensor(np.swapaxes(self.a, d0, d1))

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return Tensor(np.transpose(self.a, dims))

    @property
    def T(self):
        return Tensor(self.a.T)

    def numpy(self):
        return self.a

    def tolist(self):
        return self.a.tolist()

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)

    def __repr__(self):
        return "Tensor(shape=%s, dtype=%s)" % (self.shape, self.a.dtype.name)


def _allocate(shape, dtype, fill=None):
    """A new array of `shape` with a gap as large as itself on each side (at least 64 bytes, and
    a multiple of it, so the array stays aligned for tensor descriptors): an address a little
    past one buffer then lies in no buffer and is reported out of bounds, not taken for the
    buffer that happens to come next in memory."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    step = max(1, 64 // dtype.itemsize)
    gap = -(-max(n, 1) // step) * step
    root = np.zeros(n + 2 * gap, dtype=dtype)
    a = root[gap:gap + n].reshape(shape)
    if fill is not None:
        a[...] = np.asarray(fill, dtype=dtype).reshape(shape)
    return a


def _extent(t):
    """The bytes a tensor's elements span, from its first element (strides are not negative)."""
    if t.numel() == 0:
        return 0
    shape, strides = tuple(t.shape), tuple(t.stride())
    last = sum((n - 1) * s for n, s in zip(shape, strides))
    return (last + 1) * t.element_size()


class _Region:
    """A span of memory: a buffer the trace names (`name` set), or a kernel argument nobody named
    (`name` None: scratch, not recorded)."""

    __slots__ = ("start", "end", "itemsize", "name", "read", "write")

    def __init__(self, start, end, itemsize, name):
        self.start, self.end, self.itemsize, self.name = start, end, itemsize, name
        if name is not None:
            from attn_record import _json_string
            nm = _json_string(name)
            self.read = '{"op":"read","buffer":%s,"offset":' % nm
            self.write = '{"op":"write","buffer":%s,"offset":' % nm


def _tensors(arg):
    """The tensors in a kernel argument: itself, a tensor descriptor's base, a tuple's items."""
    if isinstance(arg, (tuple, list)):
        for a in arg:
            yield from _tensors(a)
    elif hasattr(arg, "data_ptr") and hasattr(arg, "stride"):
        yield arg
    elif hasattr(arg, "base") and hasattr(arg, "block_shape"):  # a TensorDescriptor
        yield from _tensors(arg.base)


class TritonRecorder:
    """Records the loads and stores of Triton kernels run by the interpreter into `rec` (an
    `attn_record.Recorder`), for as long as it is open (a `with` block, or until `close()`).

    Buffers: `input(name)` the inputs file's tensor, `zeros(name, shape)` a new one, `watch(name,
    tensor)` one you made (a torch tensor, a `Tensor`, a numpy array). `bind(...)` declares, from a
    tensor's strides, how your buffer maps onto our tensors (for a layout other than ours).
    """

    _active = None  # one recorder patches the interpreter at a time

    def __init__(self, rec):
        import triton
        from triton.runtime import interpreter

        if not triton.knobs.runtime.interpret:
            raise RuntimeError("attn_record_triton: Triton's interpreter is off (TRITON_INTERPRET=%r): "
                               "import attn_record_triton before triton, or set TRITON_INTERPRET=1"
                               % os.environ.get("TRITON_INTERPRET"))
        if TritonRecorder._active is not None:
            raise RuntimeError("attn_record_triton: another TritonRecorder is open; close it first")
        self.rec = rec
        self._named = []  # _Region, sorted by start, non-overlapping
        self._scratch = []  # the current launch's unnamed tensors
        self._views = {}  # buffer -> the views bind() declared for it
        self._skip = {}  # source file -> is it Triton's, numpy's or ours (never the learner's line)
        self._roots = tuple(os.path.dirname(m.__file__) + os.sep for m in (triton, np))
        builder = interpreter.interpreter_builder
        self._builder = builder
        self._interp = interpreter
        cls = type(builder)
        self._orig = {name: getattr(cls, name).__get__(builder)
                      for name in ("create_masked_load", "create_masked_store", "create_atomic_rmw")}
        self._orig_call = interpreter.GridExecutor.__call__
        builder.create_masked_load = self._load
        builder.create_masked_store = self._store
        builder.create_atomic_rmw = self._atomic_rmw
        recorder = self

        def call(executor, *args, **kwargs):
            # a kernel launch: note the tensors it was given that no buffer covers (scratch)
            recorder._scratch = []
            for t in _tensors(list(args) + list(kwargs.values())):
                start = t.data_ptr()
                end = start + _extent(t)
                if recorder._find(start) is None and end > start:
                    recorder._scratch.append(_Region(start, end, t.element_size(), None))
            try:
                return recorder._orig_call(executor, *args, **kwargs)
            finally:
                recorder._scratch = []

        interpreter.GridExecutor.__call__ = call
        TritonRecorder._active = self

    # buffers

    def input(self, name, shape=None):
        """The inputs file's tensor `name` as a float32 `Tensor` of its shape (or `shape`), named
        `name` in the trace."""
        tensors = self.rec.inputs.tensors
        if name not in tensors:
            raise KeyError("the inputs file has no tensor %r (it has %s)" % (name, ", ".join(tensors) or "none"))
        shape = tuple(shape if shape is not None else self.rec.inputs.shapes[name])
        return self.watch(name, Tensor(_allocate(shape, np.float32, tensors[name])))

    def zeros(self, name, shape, dtype=np.float32):
        """A new `Tensor` of zeros, named `name` in the trace."""
        return self.watch(name, Tensor(_allocate(shape, dtype)))

    def watch(self, name, tensor):
        """Record the accesses to `tensor`'s elements as buffer `name`, at offsets from its first
        element; a numpy array is wrapped as a `Tensor`. Returns the tensor."""
        if isinstance(tensor, np.ndarray):
            tensor = Tensor(tensor)
        if str(getattr(tensor, "device", "cpu")) != "cpu":
            raise ValueError("attn_record_triton: %r is on %s: the interpreter runs on host memory" % (name, tensor.device))
        if any(s < 0 for s in tensor.stride()):
            raise ValueError("attn_record_triton: %r has a negative stride" % name)
        if any(r.name == name for r in self._named):
            raise ValueError("attn_record_triton: a buffer named %r is already watched" % name)
        start = tensor.data_ptr()
        region = _Region(start, start + _extent(tensor), tensor.element_size(), name)
        for r in self._named:
            if region.start < r.end and r.start < region.end:
                raise ValueError("attn_record_triton: %r overlaps buffer %r: watch the whole buffer once "
                                 "and pass views of it to the kernels" % (name, r.name))
        self._named.append(region)
        self._named.sort(key=lambda r: r.start)
        return tensor

    def bind(self, buffer, tensor, view, dims):
        """Declare that `view` (a tensor inside watched buffer `buffer`, or that buffer's tensor
        itself) holds our tensor `tensor`, its dimensions named by `dims` in order ("b h i d":
        the names the inputs file's comments give our tensor's dimensions). The offset and strides
        come from the view's place in the buffer and its `stride()`. Call it before any access;
        several views of one buffer add up (llm.c's inp holds q, k and v)."""
        dims = dims.split() if isinstance(dims, str) else list(dims)
        shape, strides = tuple(view.shape), tuple(view.stride())
        if len(dims) != len(shape):
            raise ValueError("attn_record_triton: bind(%r, %r): %d dimension names for a view of %d dimensions"
                             % (buffer, tensor, len(dims), len(shape)))
        region = next((r for r in self._named if r.name == buffer), None)
        if region is None:
            raise ValueError("attn_record_triton: bind(%r, ...): no buffer of that name is watched" % buffer)
        start = view.data_ptr()
        if not region.start <= start < region.end or start + _extent(view) > region.end:
            raise ValueError("attn_record_triton: bind(%r, %r): the view lies outside the buffer" % (buffer, tensor))
        offset = (start - region.start) // region.itemsize
        self._views.setdefault(buffer, []).append(
            {"tensor": tensor, "offset": offset, "strides": dict(zip(dims, strides))})
        self.rec.bind(buffer, self._views[buffer])

    # address -> buffer

    def _find(self, addr):
        for r in self._named:
            if r.start <= addr < r.end:
                return r
        for r in self._scratch:
            if r.start <= addr < r.end:
                return r
        return None

    def _lanes(self, ptrs, mask):
        """The lanes a call touches, in row-major order: (flat lane indices, addresses, region of
        each address or None) for the lanes its mask leaves on."""
        addrs = np.ascontiguousarray(ptrs).reshape(-1)
        on = np.broadcast_to(mask, np.shape(ptrs)).reshape(-1) if mask is not None else np.ones(addrs.size, bool)
        lanes = np.flatnonzero(on)
        at = addrs[lanes].tolist()
        found = {}  # most lanes of a block share a few regions: look each address up once per call
        regions = []
        for a in at:
            r = found.get(a, False)
            if r is False:
                r = found[a] = self._find(a)
            regions.append(r)
        return lanes, at, regions

    def _owner(self, at, regions):
        """The buffer an address outside every buffer is counted against: the one most of the
        call's lanes are in, else the nearest."""
        counts = {}
        for r in regions:
            if r is not None:
                counts[id(r)] = (counts.get(id(r), (0, r))[0] + 1, r)
        if counts:
            return max(counts.values(), key=lambda c: c[0])[1]
        spans = self._named + self._scratch
        if not spans:
            return None
        a = at[0]
        return min(spans, key=lambda r: r.start - a if a < r.start else a - r.end + 1)

    def _frame(self):
        """The learner's frame: the first one up the stack outside Triton, numpy and this module."""
        f = sys._getframe(2)
        skip = self._skip
        while f.f_back is not None:
            fn = f.f_code.co_filename
            s = skip.get(fn)
            if s is None:
                s = skip[fn] = fn == __file__ or fn.startswith(self._roots)
            if not s:
                break
            f = f.f_back
        return f

    def _resolve(self, at, regions):
        """Each lane's buffer: its own, or for a lane outside every buffer, its owner's."""
        if all(r is not None for r in regions):
            return regions
        owner = self._owner(at, regions)
        return [owner if r is None else r for r in regions]

    def _record(self, op, at, regions, values, frame):
        """One event per lane of a named buffer, at its offset from the buffer's first element;
        lanes of scratch memory (and of no memory at all) are not recorded."""
        event = self.rec._event
        for a, r, v in zip(at, regions, values):
            if r is not None and r.name is not None:
                event(r.read if op == "read" else r.write, (a - r.start) // r.itemsize, v, frame)

    def _masked(self, ptrs, mask, lanes, regions):
        """`mask` with the lanes outside every buffer turned off, so memory nobody was given is
        never touched; and the indices (into `lanes`) of those lanes."""
        outside = [k for k, r in enumerate(regions) if r is None]
        if not outside:
            return mask, outside
        keep = np.broadcast_to(mask.data, ptrs.data.shape).copy().reshape(-1)
        keep[lanes[outside]] = False
        return self._interp.TensorHandle(keep.reshape(ptrs.data.shape), mask.dtype), outside

    # the interpreter's memory operations, wrapped

    def _load(self, ptrs, mask, other, cache_policy, is_volatile):
        lanes, at, regions = self._lanes(ptrs.data, mask.data)
        mask, outside = self._masked(ptrs, mask, lanes, regions)
        ret = self._orig["create_masked_load"](ptrs, mask, other, cache_policy, is_volatile)
        if outside:
            ret.data.reshape(-1)[lanes[outside]] = 0  # a read outside every buffer gives 0
        data = np.broadcast_to(ret.data, ptrs.data.shape).reshape(-1)
        self._record("read", at, self._resolve(at, regions), data[lanes].tolist(), self._frame())
        return ret

    def _store(self, ptrs, value, mask, cache_policy):
        lanes, at, regions = self._lanes(ptrs.data, mask.data)
        mask, _ = self._masked(ptrs, mask, lanes, regions)  # a store outside every buffer is dropped
        ret = self._orig["create_masked_store"](ptrs, value, mask, cache_policy)
        # what each lane stored, in the pointer's element type
        dtype = self._interp._get_np_dtype(ptrs.get_element_ty())
        vals = np.broadcast_to(np.asarray(value.data).astype(dtype), ptrs.data.shape).reshape(-1)
        self._record("write", at, self._resolve(at, regions), vals[lanes].tolist(), self._frame())
        return ret

    def _atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope):
        lanes, at, regions = self._lanes(ptr.data, mask.data)
        mask, outside = self._masked(ptr, mask, lanes, regions)
        old = self._orig["create_atomic_rmw"](rmw_op, ptr, val, mask, sem, scope)
        if outside:
            old.data.reshape(-1)[lanes[outside]] = 0
        before = np.broadcast_to(old.data, ptr.data.shape).reshape(-1)[lanes].tolist()
        # what each lane left in memory, read back (0 outside every buffer: nothing was stored)
        after = self._orig["create_masked_load"](ptr, mask, None, None, True).data
        after = np.broadcast_to(after, ptr.data.shape).reshape(-1)[lanes].tolist()
        resolved = self._resolve(at, regions)
        frame = self._frame()
        for k in range(len(lanes)):
            # lane by lane: each lane's read of the old value, then its write of the new one
            self._record("read", at[k:k + 1], resolved[k:k + 1], before[k:k + 1], frame)
            self._record("write", at[k:k + 1], resolved[k:k + 1], after[k:k + 1], frame)
        return old

    # closing

    def close(self):
        """Stop recording: the interpreter's own memory operations are back."""
        if TritonRecorder._active is not self:
            return
        for name in self._orig:
            self._builder.__dict__.pop(name, None)
        self._interp.GridExecutor.__call__ = self._orig_call
        TritonRecorder._active = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
