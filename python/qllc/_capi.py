"""ctypes declarations of include/qllc.h: the structs, the functions and the library they come from.

The struct layouts mirror the header field for field; tests/python/python_test.sh compiles a C program that
prints every field's offset and compares them with these (a change to qllc.h that is not made here fails
it). qllc_options ends in spare bytes, so that a library newer than this file, whose qllc_options_init
writes fields this module does not know, writes them into that tail with their defaults.

Every function is called through ctypes.CDLL, which releases the GIL for the call: threads run compiles and
JIT runs in parallel (the C library is thread-safe for concurrent qllc_jit_run on one JIT).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_void_p)

MAX_RANK = 8

# qllc_status and the element kinds (stable numbers, bundle headers use them)
OK = 0
STATUS_NAMES = ("QLLC_OK", "QLLC_ERR_IO", "QLLC_ERR_PARSE", "QLLC_ERR_UNSUPPORTED", "QLLC_ERR_INVALID",
                "QLLC_ERR_MISMATCH", "QLLC_ERR_LLVM", "QLLC_ERR_NOMEM", "QLLC_ERR_STRICT", "QLLC_ERR_RUNTIME")
ELEM_NAMES = ("f32", "i8", "u8", "i16", "i32", "i64")
PRECISIONS = ("float", "int8", "int16")
SCHEMAS = ("asymmetric", "symmetric", "symmetric_uint8", "power2", "default")
CALIBRATIONS = ("minmax", "percentile", "kl", "mse")


class Diag(Structure):
    _fields_ = [("status", c_int), ("message", c_char * 1024), ("node", c_char * 256), ("file", c_char * 512)]


class Tensor(Structure):
    _fields_ = [("name", c_char_p), ("elem", c_int), ("rank", c_uint32), ("dims", c_int64 * MAX_RANK),
                ("scale", c_float), ("zero_point", c_int32), ("data", c_void_p)]


NoteFn = CFUNCTYPE(None, c_void_p, c_char_p)
ProgressFn = CFUNCTYPE(None, c_void_p, c_int64, c_int64)


class LoadOptions(Structure):  # qllc_load_options
    _fields_ = [("bound", POINTER(Tensor)), ("n_bound", c_int), ("shapes", POINTER(Tensor)), ("n_shapes", c_int),
                ("note", NoteFn), ("note_ctx", c_void_p)]


class Options(Structure):
    _fields_ = [
        ("precision", c_int), ("weight_precision", c_int), ("schema", c_int), ("calibration", c_int),
        ("per_tensor", c_int), ("profile_path", c_char_p), ("keep_float", POINTER(c_char_p)),
        ("n_keep_float", c_int), ("strict", c_int), ("quantized_io", c_int),
        ("target", c_char_p), ("cpu", c_char_p), ("features", c_char_p), ("reloc_pic", c_int),
        ("weights_file", c_int), ("kernel_files", POINTER(c_char_p)), ("n_kernel_files", c_int),
        ("dump_after", c_char_p), ("dump_stream", c_void_p),
        ("min_sqnr_db", c_double), ("search_dataset", POINTER(c_char_p)), ("n_search_dataset", c_int),
        ("precision_map", c_char_p), ("precision_map_out", c_char_p),
        ("no_tune", c_int), ("tune_cache", c_char_p),
        ("note", NoteFn), ("note_ctx", c_void_p), ("progress", NoteFn), ("progress_ctx", c_void_p),
        ("_tail", c_char * 512),  # not in qllc.h: room for fields a newer library adds (see above)
    ]


class ProfileSummary(Structure):
    _fields_ = [("samples", c_int64), ("values", c_int)]


class CompareRow(Structure):
    _fields_ = [("value", c_char_p), ("node", c_char_p), ("op", c_char_p), ("types", c_char * 48),
                ("elem", c_int), ("scale", c_float), ("zero_point", c_int32), ("is_output", c_int),
                ("count", c_int64), ("sqnr_db", c_double), ("max_abs_err", c_double), ("saturated", c_double),
                ("signal_rms", c_double), ("grid_sqnr_db", c_double)]


class CompareResult(Structure):
    _fields_ = [("samples", c_int64), ("drawn", c_int), ("n_rows", c_int), ("rows", POINTER(CompareRow))]


def _find_library() -> str:
    """$QLLC_LIBRARY, else the library this package was built or installed with, else the loader's search."""
    env = os.environ.get("QLLC_LIBRARY")
    if env:
        return env
    try:
        from . import _libpath  # written by the build (build tree) and by `cmake --install` (the prefix)
        path = _libpath.library()
        if os.path.exists(path):
            return path
    except ImportError:
        pass
    found = ctypes.util.find_library("qllc")
    if found:
        return found
    raise OSError("libqllc.so not found: set QLLC_LIBRARY to its path, or install qllc with `cmake --install`")


lib = ctypes.CDLL(_find_library())
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")

_P = POINTER
_decls = {
    "qllc_version": (c_char_p, []),
    "qllc_status_name": (c_char_p, [c_int]),
    "qllc_tensor_free": (None, [_P(Tensor)]),
    "qllc_options_init": (None, [_P(Options)]),
    "qllc_model_load_bound": (c_int, [c_char_p, _P(Tensor), c_int, _P(c_void_p), _P(Diag)]),
    "qllc_model_load_opts": (c_int, [c_char_p, _P(LoadOptions), _P(c_void_p), _P(Diag)]),
    "qllc_model_free": (None, [c_void_p]),
    "qllc_model_num_inputs": (c_int, [c_void_p]),
    "qllc_model_num_outputs": (c_int, [c_void_p]),
    "qllc_model_input": (_P(Tensor), [c_void_p, c_int]),
    "qllc_model_output": (_P(Tensor), [c_void_p, c_int]),
    "qllc_model_describe": (c_int, [c_void_p, _P(Options), c_void_p, _P(Diag)]),
    "qllc_model_write_dot": (c_int, [c_void_p, _P(Options), c_void_p, _P(Diag)]),
    "qllc_compile_bundle": (c_int, [c_void_p, _P(Options), c_char_p, c_char_p, _P(Diag)]),
    "qllc_profile_dataset_opts": (c_int, [c_void_p, _P(Options), _P(c_char_p), c_int, c_int, c_char_p, ProgressFn,
                                          c_void_p, _P(ProfileSummary), _P(Diag)]),
    "qllc_compare": (c_int, [c_void_p, _P(Options), _P(c_char_p), c_int, c_int64, _P(_P(CompareResult)), _P(Diag)]),
    "qllc_compare_result_free": (None, [_P(CompareResult)]),
    "qllc_jit_compile": (c_int, [c_void_p, _P(Options), _P(c_void_p), _P(Diag)]),
    "qllc_jit_free": (None, [c_void_p]),
    "qllc_jit_num_inputs": (c_int, [c_void_p]),
    "qllc_jit_num_outputs": (c_int, [c_void_p]),
    "qllc_jit_input": (_P(Tensor), [c_void_p, c_int]),
    "qllc_jit_output": (_P(Tensor), [c_void_p, c_int]),
    "qllc_jit_run": (c_int, [c_void_p, _P(Tensor), c_int, _P(Tensor), _P(Diag)]),
}
for _name, (_res, _args) in _decls.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _res, _args

libc.open_memstream.restype = c_void_p
libc.open_memstream.argtypes = [_P(c_void_p), _P(c_size_t)]
libc.fclose.restype = c_int
libc.fclose.argtypes = [c_void_p]
libc.free.restype = None
libc.free.argtypes = [c_void_p]
