"""qllc from Python: load an ONNX model, calibrate it on numpy arrays, JIT-compile and run it, compare it
against float, and compile it to a bundle (object file + C header). docs/python.md has the guide.

    import qllc
    m = qllc.load("model.onnx")
    prof = m.profile(calib)                      # calib: [S, ...] float32 samples of the one input
    jit = m.jit(precision="int8", profile=prof)
    outs = jit.run({"input": x})                 # {output name: numpy array}

Every call goes into libqllc.so through ctypes, which releases the GIL while the library works: other
Python threads run meanwhile, and several threads may call one Jit's run() at once (each call has its own
buffers in the library). Errors of the library raise qllc.Error with its message, file and node.
"""
from __future__ import annotations

import ctypes
import math
import os
import shutil
import tempfile
import warnings
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional, Union

import numpy as np

from . import _capi as _c

__all__ = ["Error", "Note", "TensorInfo", "Model", "Jit", "Profile", "CompareRow", "Comparison", "Bundle", "load",
           "load_profile", "version"]

PathLike = Union[str, "os.PathLike[str]"]
Samples = Union[np.ndarray, Mapping[str, Any], Iterable[Any], PathLike, Sequence[PathLike]]

_DTYPES = (np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64)  # by qllc_elem_kind


def version() -> str:
    """The version of the libqllc.so in use ("0.3.0")."""
    return _c.lib.qllc_version().decode()


__version__ = version()


class Error(Exception):
    """An error of the qllc library (or of the arguments given to this package).

    Attributes: status (the library's status name, e.g. "QLLC_ERR_INVALID"), message, node (the ONNX node
    it concerns, "" when none), file (the file it concerns, "" when none)."""

    def __init__(self, message: str, status: str = "QLLC_ERR_INVALID", node: str = "", file: str = ""):
        self.status, self.message, self.node, self.file = status, message, node, file
        text = message
        if node and f"node '{node}'" not in text:
            text = f"node '{node}': {text}"
        if file and not text.startswith(file):
            text = f"{file}: {text}"
        super().__init__(text)


class Note(UserWarning):
    """A note of the library (not an error): e.g. a bundle compiled for the generic CPU on a machine that
    runs faster code. Issued with warnings.warn."""


def _check(status: int, diag: _c.Diag) -> None:
    if status != _c.OK:
        name = _c.STATUS_NAMES[status] if 0 <= status < len(_c.STATUS_NAMES) else f"status {status}"
        raise Error(diag.message.decode(errors="replace") or _c.lib.qllc_status_name(status).decode(), name,
                    diag.node.decode(errors="replace"), diag.file.decode(errors="replace"))


def _b(s: Optional[PathLike]) -> Optional[bytes]:
    return None if s is None else os.fsencode(s)


def _str_array(items: Sequence[PathLike], keep: list):
    arr = (ctypes.c_char_p * max(1, len(items)))(*[_b(i) for i in items])
    keep.append(arr)
    return arr, len(items)


class TensorInfo(NamedTuple):
    """An input or output: its name, numpy dtype, shape, and (quantized tensors) scale and zero point."""
    name: str
    dtype: np.dtype
    shape: tuple
    scale: float
    zero_point: int


def _info(t: _c.Tensor) -> TensorInfo:
    return TensorInfo(t.name.decode(), np.dtype(_DTYPES[t.elem]), tuple(t.dims[d] for d in range(t.rank)),
                      float(t.scale), int(t.zero_point))


def _elem_of(a: np.ndarray) -> int:
    for k, dt in enumerate(_DTYPES):
        if a.dtype == dt:
            return k
    raise Error(f"arrays of {a.dtype} are not supported (float32, int8, uint8, int16, int32, int64)")


def _tensor(name: Optional[bytes], a: np.ndarray) -> _c.Tensor:
    """A qllc_tensor over the bytes of a C-contiguous array (not copied: the array must outlive its use)."""
    if a.ndim > _c.MAX_RANK:
        raise Error(f"an array of rank {a.ndim}: qllc tensors have at most {_c.MAX_RANK} dimensions")
    t = _c.Tensor()
    t.name, t.elem, t.rank = name, _elem_of(a), a.ndim
    for d, n in enumerate(a.shape):
        t.dims[d] = n
    t.scale, t.zero_point, t.data = 1.0, 0, a.ctypes.data
    return t


def _owned_array(t: _c.Tensor) -> np.ndarray:
    """The output tensor t (data malloc'ed by the library) as an array over the same bytes, freed with
    qllc_tensor_free when the array (and every view of it) is gone."""
    dt = np.dtype(_DTYPES[t.elem])
    shape = tuple(t.dims[d] for d in range(t.rank))
    n = math.prod(shape) * dt.itemsize
    if n == 0 or not t.data:
        _c.lib.qllc_tensor_free(ctypes.byref(t))
        return np.zeros(shape, dt)
    buf = (ctypes.c_char * n).from_address(t.data)
    weakref.finalize(buf, _c.lib.qllc_tensor_free, ctypes.byref(t))  # byref keeps t alive with the finalizer
    return np.frombuffer(buf, dt).reshape(shape)


def _read_stream(fn: Callable[[int], None]) -> str:
    """Calls fn(FILE *) on a memory stream and returns what it wrote."""
    ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
    f = _c.libc.open_memstream(ctypes.byref(ptr), ctypes.byref(size))
    if not f:
        raise Error("open_memstream failed", "QLLC_ERR_NOMEM")
    try:
        fn(f)
    finally:
        _c.libc.fclose(f)
        text = ctypes.string_at(ptr, size.value).decode(errors="replace") if ptr.value else ""
        _c.libc.free(ptr)
    return text


# ---- profiles ---------------------------------------------------------------------------------------

class Profile:
    """A calibration profile (the YAML of `qllc profile`: per value min, max and a histogram, tied to its
    model by the graph's hash). Made by Model.profile or load_profile; give it to jit/compile/compare/info
    as profile=. `samples` and `values` say what was profiled (None for a loaded file)."""

    def __init__(self, path: str, samples: Optional[int] = None, values: Optional[int] = None,
                 _tmp: Optional[str] = None):
        self.path, self.samples, self.values = path, samples, values
        if _tmp:  # a profile made here lives in a temporary directory until the object is gone
            self._cleanup = weakref.finalize(self, shutil.rmtree, _tmp, True)

    @property
    def text(self) -> str:
        """The YAML text."""
        with open(self.path, encoding="utf-8") as f:
            return f.read()

    def save(self, path: PathLike) -> None:
        """Writes the profile to path (YAML; `qllc` reads it with --profile)."""
        path = os.fspath(path)
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            shutil.copyfile(self.path, tmp)
            os.replace(tmp, path)
        except OSError as e:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise Error(f"cannot write the profile: {e.strerror}", "QLLC_ERR_IO", file=path) from None

    def __repr__(self) -> str:
        what = f", {self.samples} samples, {self.values} values" if self.samples is not None else ""
        return f"qllc.Profile({self.path!r}{what})"


def load_profile(path: PathLike) -> Profile:
    """A profile file written by Profile.save or `qllc profile`. Whether it belongs to a model is checked when
    it is used (a mismatch raises Error naming the file)."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as e:
        raise Error(f"cannot read the profile: {e.strerror}", "QLLC_ERR_IO", file=path) from None
    return Profile(path)


# ---- options ----------------------------------------------------------------------------------------

def _pick(key: str, value: Any, names: Sequence[str]) -> int:
    if value in names:
        return names.index(value)
    raise Error(f"{key}: invalid value {value!r} (valid: {', '.join(names)})")


def _note(ctx, text) -> None:
    warnings.warn(text.decode(errors="replace"), Note, stacklevel=3)


_NOTE = _c.NoteFn(_note)

_OPTION_KEYS = ("precision", "weight_precision", "schema", "calibration", "per_tensor", "profile", "keep_float",
                "strict", "quantized_io", "target", "cpu", "features", "reloc", "weights", "kernels", "min_sqnr",
                "search_dataset", "precision_map", "precision_map_out", "no_tune", "tune_cache")


class _Options:
    """qllc_options from keyword arguments named like the command line's options; keeps what the struct
    points to alive for as long as this object lives."""

    def __init__(self, model: Optional["Model"], kw: Mapping[str, Any], allowed: Sequence[str] = _OPTION_KEYS):
        unknown = [k for k in kw if k not in allowed]
        if unknown:
            raise TypeError(f"unexpected option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                            f"(valid: {', '.join(allowed)})")
        o = self.struct = _c.Options()
        _c.lib.qllc_options_init(ctypes.byref(o))
        self._keep: list = []
        self._tmp: Optional[tempfile.TemporaryDirectory] = None
        for k, v in kw.items():
            if v is None:
                continue
            if k == "precision":
                o.precision = _pick(k, v, _c.PRECISIONS)
            elif k == "weight_precision":
                o.weight_precision = _pick(k, v, _c.PRECISIONS[1:]) + 1
            elif k == "schema":
                o.schema = _pick(k, v, _c.SCHEMAS)
            elif k == "calibration":
                o.calibration = _pick(k, v, _c.CALIBRATIONS)
            elif k in ("per_tensor", "strict", "quantized_io", "no_tune"):
                setattr(o, k, int(bool(v)))
            elif k == "profile":
                if not isinstance(v, Profile):
                    v = load_profile(v)
                self._keep.append(v)
                o.profile_path = _b(v.path)
            elif k == "keep_float":
                o.keep_float, o.n_keep_float = _str_array([v] if isinstance(v, str) else list(v), self._keep)
            elif k in ("target", "cpu", "tune_cache", "precision_map", "precision_map_out"):
                setattr(o, k, _b(v))
            elif k == "features":
                o.features = _b(v if isinstance(v, str) else ",".join(v))
            elif k == "reloc":
                o.reloc_pic = int(_pick(k, v, ("pic", "static")) == 0)
            elif k == "weights":
                o.weights_file = _pick(k, v, ("object", "file"))
            elif k == "kernels":
                o.kernel_files, o.n_kernel_files = _str_array([v] if isinstance(v, (str, os.PathLike)) else list(v),
                                                              self._keep)
            elif k == "min_sqnr":
                if not 0 < float(v) < 400:
                    raise Error(f"min_sqnr: invalid value {v!r} (dB, e.g. 45)")
                o.min_sqnr_db = float(v)
            elif k == "search_dataset":
                o.search_dataset, o.n_search_dataset = _str_array(self.dataset(model, v), self._keep)
        if o.min_sqnr_db > 0 and o.precision_map:
            raise Error("min_sqnr and precision_map: give one")
        o.note = _NOTE

    def dataset(self, model: Optional["Model"], samples: Samples) -> list:
        """Data set specs (qllc_profile_dataset's forms) for samples; arrays are written to .npy files in a
        temporary directory that lives as long as this object."""
        if isinstance(samples, (str, os.PathLike)):
            return [os.fspath(samples)]
        if isinstance(samples, (list, tuple)) and samples and all(isinstance(s, (str, os.PathLike)) for s in samples):
            return [os.fspath(s) for s in samples]
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="qllc-samples-")
        d = self._tmp.name
        n = len(os.listdir(d))

        def save(path: str, a: Any) -> str:
            np.save(path, np.ascontiguousarray(a, dtype=np.float32))
            return path

        if isinstance(samples, np.ndarray):  # one input: samples along the first axis
            return [save(os.path.join(d, f"{n}.npy"), samples)]
        if isinstance(samples, Mapping):
            specs = []
            for i, (name, a) in enumerate(samples.items()):
                spec = os.fspath(a) if isinstance(a, (str, os.PathLike)) else save(os.path.join(d, f"{n}_{i}.npy"), a)
                specs.append(f"{name}={spec}")
            return specs
        if isinstance(samples, Iterable):  # one sample at a time: a directory of files per input
            names = [i.name for i in model.inputs] if model else []
            dirs: dict = {}
            count = 0
            for s in samples:
                if isinstance(s, np.ndarray):
                    if len(names) != 1:
                        raise Error(f"a sample given as one array, but the model has {len(names)} inputs "
                                    "(give a dict name -> array per sample)")
                    s = {names[0]: s}
                if not isinstance(s, Mapping):
                    raise Error(f"sample {count}: expected a dict name -> array or an array, got {type(s).__name__}")
                for name, a in s.items():
                    if name not in dirs:
                        if count:
                            raise Error(f"sample {count}: input '{name}' was not in the samples before it")
                        dirs[name] = os.path.join(d, f"{n}_{len(dirs)}")
                        os.mkdir(dirs[name])
                    save(os.path.join(dirs[name], f"{count:09d}.npy"), a)
                count += 1
            if not count:
                raise Error("no samples given (the iterable was empty)")
            return [f"{name}={path}" for name, path in dirs.items()]
        raise Error(f"samples: expected an array, a dict name -> array, an iterable of samples or a path, "
                    f"got {type(samples).__name__}")

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


# ---- compare ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CompareRow:
    """One value of the model, float against quantized (qllc_compare_row; `qllc compare --csv` columns)."""
    value: str          # ONNX value name
    node: str           # the node of the quantized graph that produced it
    op: str             # its op type
    types: str          # what that node computes: "i8 x i8 -> i8", "f32" (kept in float) ...
    elem: str           # the value's element kind in the quantized graph ("i8", "f32" ...)
    scale: float
    zero_point: int
    is_output: bool
    count: int          # elements compared (every sample)
    sqnr_db: float      # 10 log10(sum f^2 / sum (q - f)^2); inf when exact
    max_abs_err: float
    saturated: float    # share of elements whose float value lies outside the integer range
    signal_rms: float
    grid_sqnr_db: float  # the SQNR of the float value rounded to this value's own grid


class Comparison(list):
    """The rows of a compare: the model outputs first, then every other value; each group worst first.
    `samples`: how many samples ran; `drawn`: True when they were drawn from the profile's histograms (no
    samples given, and a profile without kept samples); `kept`: True when they were the calibration samples
    kept in the profile."""
    samples: int = 0
    drawn: bool = False
    kept: bool = False

    @property
    def outputs(self) -> list:
        return [r for r in self if r.is_output]


class Bundle(NamedTuple):
    """The files compile wrote."""
    object: str
    header: str
    weights: Optional[str]


# ---- models and JITs --------------------------------------------------------------------------------

def _default_name(path: str) -> str:
    """The model file's stem as a C identifier (as `qllc compile` does)."""
    stem = os.path.basename(path)
    if "." in stem[1:]:
        stem = stem[:stem.rindex(".")]
    out = "".join(c if c.isascii() and c.isalnum() else "_" for c in stem)
    return "model_" + out if not out or out[0].isdigit() else out


class _Handle:
    """A library handle freed by close(), by `with`, or when the object is gone."""
    _what = "handle"

    def _own(self, handle: ctypes.c_void_p, free: Callable[[ctypes.c_void_p], None]) -> None:
        self._h = handle
        self._free = weakref.finalize(self, free, handle)

    @property
    def _handle(self) -> ctypes.c_void_p:
        if not self._free.alive:
            raise Error(f"the {self._what} was closed")
        return self._h

    def close(self) -> None:
        """Frees the library's object now."""
        self._free()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Model(_Handle):
    """A loaded ONNX model (qllc_model). Make one with qllc.load. close() frees it; JITs made from it stay
    valid."""
    _what = "model"

    def __init__(self, path: PathLike, shapes: Optional[Mapping[str, Sequence[int]]] = None,
                 consts: Optional[Mapping[str, Any]] = None):
        self.path = os.fspath(path)
        bound, keep = [], []
        for name, a in (consts or {}).items():
            a = np.asarray(a)
            if a.dtype == np.float64:
                a = a.astype(np.float32)
            elif a.dtype == np.bool_:
                a = a.astype(np.uint8)
            a = np.ascontiguousarray(a)
            keep.append(a)
            bound.append(_tensor(name.encode(), a))
        pins = []  # qllc_load_options.shapes: name, rank and dims (no data)
        for name, shape in (shapes or {}).items():
            dims = [int(n) for n in shape]
            if len(dims) > _c.MAX_RANK:
                raise Error(f"shapes: input '{name}' has {len(dims)} dimensions; qllc tensors have at most "
                            f"{_c.MAX_RANK}", "QLLC_ERR_INVALID", file=self.path)
            t = _c.Tensor()
            t.name, t.rank = name.encode(), len(dims)
            for k, n in enumerate(dims):
                t.dims[k] = n
            pins.append(t)
        lo = _c.LoadOptions()
        lo.bound, lo.n_bound = (_c.Tensor * max(1, len(bound)))(*bound), len(bound)
        lo.shapes, lo.n_shapes = (_c.Tensor * max(1, len(pins)))(*pins), len(pins)
        lo.note = _NOTE  # e.g. a symbolic leading dim taken as 1: a qllc.Note warning
        h, d = ctypes.c_void_p(), _c.Diag()
        _check(_c.lib.qllc_model_load_opts(_b(self.path), ctypes.byref(lo), ctypes.byref(h), ctypes.byref(d)), d)
        self._own(h, _c.lib.qllc_model_free)
        ins = [_c.lib.qllc_model_input(h, i).contents for i in range(_c.lib.qllc_model_num_inputs(h))]
        outs = [_c.lib.qllc_model_output(h, i).contents for i in range(_c.lib.qllc_model_num_outputs(h))]
        self.inputs: list = [_info(t) for t in ins]
        self.outputs: list = [_info(t) for t in outs]

    def __repr__(self) -> str:
        sig = lambda ts: ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in ts)
        return f"qllc.Model({self.path!r}, inputs=[{sig(self.inputs)}], outputs=[{sig(self.outputs)}])"

    def profile(self, samples: Samples, *, bins: int = 0, kernels: Optional[Sequence[PathLike]] = None,
                progress: Optional[Callable[[int, int], None]] = None) -> Profile:
        """Runs the float model on every sample and records each value's range and histogram.

        samples: a float array with the samples along the first axis ([S, ...input shape] or [S, ...] for an
        input [1, ...]) for a one-input model; a dict input name -> such an array (or a path); an iterable of
        samples (each a dict name -> array of one sample, or an array for a one-input model); or data set
        specs as for `qllc profile --dataset` (a path, or a list of them). bins: histogram bins (0: 2048).
        progress(done, total) is called after each sample."""
        opts = _Options(self, {"kernels": kernels}, ("kernels",))
        try:
            specs, n = _str_array(opts.dataset(self, samples), opts._keep)
            tmp = tempfile.mkdtemp(prefix="qllc-profile-")
            out = os.path.join(tmp, "profile.yaml")
            summary, d = _c.ProfileSummary(), _c.Diag()
            cb = _c.ProgressFn(lambda ctx, done, total: progress(done, total)) if progress else _c.ProgressFn()
            st = _c.lib.qllc_profile_dataset_opts(self._handle, ctypes.byref(opts.struct), specs, n, bins, out.encode(),
                                                  cb, None, ctypes.byref(summary), ctypes.byref(d))
            if st != _c.OK:
                shutil.rmtree(tmp, True)
                _check(st, d)
            return Profile(out, summary.samples, summary.values, _tmp=tmp)
        finally:
            opts.close()

    def jit(self, **options: Any) -> "Jit":
        """JIT-compiles the model for this machine. Options as `qllc run`'s (precision="int8", profile=,
        schema=, calibration=, per_tensor=, keep_float=[...], strict=, quantized_io=, min_sqnr=,
        search_dataset=, precision_map=, precision_map_out=, weight_precision=, cpu=, features=, kernels=,
        no_tune=, tune_cache=); profile= is a Profile or a path."""
        opts = _Options(self, options)
        try:
            h, d = ctypes.c_void_p(), _c.Diag()
            _check(_c.lib.qllc_jit_compile(self._handle, ctypes.byref(opts.struct), ctypes.byref(h), ctypes.byref(d)), d)
            return Jit(h)
        finally:
            opts.close()

    def compile(self, outdir: PathLike, name: Optional[str] = None, **options: Any) -> Bundle:
        """Writes a bundle: OUTDIR/NAME.o and OUTDIR/NAME.h (and NAME.weights.bin with weights="file").
        name: the entry symbol (default: the model file's stem as a C identifier). Options as `qllc
        compile`'s: target="x86_64"|"aarch64", cpu=, features=, reloc="pic"|"static", weights="object"|"file",
        and the quantization options of jit()."""
        name = name or _default_name(self.path)
        opts = _Options(self, options)
        try:
            d = _c.Diag()
            _check(_c.lib.qllc_compile_bundle(self._handle, ctypes.byref(opts.struct), _b(outdir), name.encode(),
                                              ctypes.byref(d)), d)
        finally:
            opts.close()
        base = os.path.join(os.fspath(outdir), name)
        return Bundle(base + ".o", base + ".h", base + ".weights.bin" if opts.struct.weights_file else None)

    def compare(self, samples: Optional[Samples] = None, *, max_samples: int = 0, **options: Any) -> Comparison:
        """Runs the float and the quantized model (precision= "int8" or "int16" and profile= are needed) on
        the same samples and compares them value by value: the rows of `qllc compare`, the model outputs
        first, then every other value, each group worst first. samples as for profile(); None: the calibration
        samples kept in the profile (up to max_samples), or, for a profile without them, max_samples (default
        32) drawn from its input histograms."""
        opts = _Options(self, options)
        try:
            specs, n = _str_array(opts.dataset(self, samples) if samples is not None else [], opts._keep)
            res, d = ctypes.POINTER(_c.CompareResult)(), _c.Diag()
            _check(_c.lib.qllc_compare(self._handle, ctypes.byref(opts.struct), specs, n, max_samples,
                                       ctypes.byref(res), ctypes.byref(d)), d)
        finally:
            opts.close()
        try:
            r = res.contents
            rows = Comparison(
                CompareRow(w.value.decode(), w.node.decode(), w.op.decode(), w.types.decode(),
                           _c.ELEM_NAMES[w.elem], float(w.scale), int(w.zero_point), bool(w.is_output), int(w.count),
                           w.sqnr_db, w.max_abs_err, w.saturated, w.signal_rms, w.grid_sqnr_db)
                for w in r.rows[:r.n_rows])
            rows.samples, rows.drawn, rows.kept = int(r.samples), int(r.drawn) == 1, int(r.drawn) == 2
            return rows
        finally:
            _c.lib.qllc_compare_result_free(res)

    def info(self, **options: Any) -> str:
        """The text of `qllc info`: the graph with every value's type, the precision report, the kernel each
        fused layer runs, the memory plan. Options as jit()'s plus target=."""
        return self._text(_c.lib.qllc_model_describe, options)

    def dot(self, **options: Any) -> str:
        """The model as compiled with these options, as a Graphviz digraph (`qllc info --dot`)."""
        return self._text(_c.lib.qllc_model_write_dot, options)

    def _text(self, fn, options: Mapping[str, Any]) -> str:
        opts = _Options(self, options)
        d = _c.Diag()
        try:
            status = []
            text = _read_stream(lambda f: status.append(fn(self._handle, ctypes.byref(opts.struct), f, ctypes.byref(d))))
            _check(status[0], d)
            return text
        finally:
            opts.close()


class Jit(_Handle):
    """A model JIT-compiled for this machine (qllc_jit). Made by Model.jit. Thread-safe: any number of
    threads may call run() (or the Jit) at once; close() must not run while a call is in progress."""
    _what = "JIT"

    def __init__(self, handle: ctypes.c_void_p):
        self._own(handle, _c.lib.qllc_jit_free)
        self.inputs: list = [_info(_c.lib.qllc_jit_input(handle, i).contents)
                             for i in range(_c.lib.qllc_jit_num_inputs(handle))]
        self.outputs: list = [_info(_c.lib.qllc_jit_output(handle, i).contents)
                              for i in range(_c.lib.qllc_jit_num_outputs(handle))]

    def __repr__(self) -> str:
        sig = lambda ts: ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in ts)
        return f"qllc.Jit(inputs=[{sig(self.inputs)}], outputs=[{sig(self.outputs)}])"

    def run(self, feeds: Union[Mapping[str, Any], Sequence[Any], np.ndarray]) -> dict:
        """Runs once. feeds: a dict input name -> array (like onnxruntime's), a list of arrays in input order,
        or one array for a one-input model. Each array must have the input's shape; it is used in place when
        it is C-contiguous and of the input's dtype (float32, or the integer type with quantized_io), else
        converted. Returns a dict output name -> array (arrays over the library's output memory, no copy)."""
        handle = self._handle
        if isinstance(feeds, np.ndarray):
            feeds = [feeds]
        if isinstance(feeds, Mapping):
            by_name = {i.name: i for i in self.inputs}
            unknown = [k for k in feeds if k not in by_name]
            if unknown:
                raise Error(f"the model has no input named '{unknown[0]}' (inputs: "
                            f"{', '.join(by_name)})")
            items = [(k, by_name[k].dtype, v) for k, v in feeds.items()]
        else:
            feeds = list(feeds)
            if len(feeds) != len(self.inputs):
                raise Error(f"{len(feeds)} inputs given, the model has {len(self.inputs)}")
            items = [(i.name, i.dtype, v) for i, v in zip(self.inputs, feeds)]
        arrays = []
        for name, dt, v in items:
            v = np.asarray(v)
            if not np.can_cast(v.dtype, dt, "same_kind"):
                raise Error(f"input '{name}': an array of {v.dtype} for an input of {dt}")
            arrays.append(np.ascontiguousarray(v, dtype=dt))
        ins = (_c.Tensor * max(1, len(items)))(*[_tensor(k.encode(), a) for (k, _, _), a in zip(items, arrays)])
        outs = (_c.Tensor * max(1, len(self.outputs)))()
        d = _c.Diag()
        _check(_c.lib.qllc_jit_run(handle, ins, len(items), outs, ctypes.byref(d)), d)
        return {outs[i].name.decode(): _owned_array(outs[i]) for i in range(len(self.outputs))}

    def __call__(self, *inputs: Any) -> list:
        """jit(x) or jit(a, b): the inputs in model order; the outputs as a list in model order."""
        return list(self.run(list(inputs)).values())


def load(path: PathLike, shapes: Optional[Mapping[str, Sequence[int]]] = None,
         consts: Optional[Mapping[str, Any]] = None) -> Model:
    """Loads an ONNX model. consts: graph inputs bound to compile-time constants (`qllc --const`): name ->
    array. shapes: input name -> the shape to compile for (like the CLI's --input-shape): symbolic
    dimensions take these sizes, fixed ones must be given as the model declares them. Without it a
    symbolic leading dim is taken as 1 (with a qllc.Note warning) and another symbolic dim raises Error."""
    return Model(path, shapes, consts)
