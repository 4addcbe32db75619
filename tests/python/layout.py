"""tests/python/layout.py: ctypes' view of the structs python/qllc/_capi.py declares, in the form
layout.c prints (qllc_options without the spare tail: its size is where the tail starts)."""
import ctypes

from qllc import _capi as c

for cname, s in (("qllc_diag", c.Diag), ("qllc_tensor", c.Tensor), ("qllc_options", c.Options),
                 ("qllc_profile_summary", c.ProfileSummary), ("qllc_compare_row", c.CompareRow),
                 ("qllc_compare_result", c.CompareResult)):
    fields = [f for f, _ in s._fields_ if f != "_tail"]
    size = s._tail.offset if cname == "qllc_options" else ctypes.sizeof(s)
    if cname == "qllc_options":  # C pads the struct to its alignment after the last field
        size = (size + ctypes.alignment(s) - 1) // ctypes.alignment(s) * ctypes.alignment(s)
    print(cname, size)
    for f in fields:
        print(f"{cname}.{f}", getattr(s, f).offset)
