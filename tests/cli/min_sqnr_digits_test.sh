#!/bin/bash
# tests/cli/min_sqnr_digits_test.sh: --min-sqnr at int8 + 3, 10, 20 and 30 dB on the sample model
# (models/digits: profiled on calib_x, searched on its test split test_x),
# each target checked by check_targets (min_sqnr_lib.sh; min_sqnr_test.sh does the outlier model):
# reached with a choice cheaper than every layer at int16 (or only by every layer at int16), each layer
# left wide named with its SQNR one level lower, measured below the target; or refused naming what
# limits it; the replayed map gives the same bundle bytes.
. "$QLLC_SOURCE_DIR/tests/cli/min_sqnr_lib.sh"
W=$QLLC_SOURCE_DIR/models/digits

check_targets digits "$W/digits.onnx" "$W/calib_x.npy" "$W/test_x.npy" "3 10 20 30"

finish min_sqnr_digits_test
