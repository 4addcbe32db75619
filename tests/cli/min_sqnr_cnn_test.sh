#!/bin/bash
# tests/cli/min_sqnr_cnn_test.sh: --min-sqnr at int8 + 3, 10, 20 and 30 dB on
# tests/quant_e2e/data/cnn_bn_pool (min_sqnr_digits_test.sh: the sample model),
# each target checked by check_targets (min_sqnr_lib.sh; min_sqnr_test.sh does the outlier model):
# reached with a choice cheaper than every layer at int16 (or only by every layer at int16), each layer
# left wide named with its SQNR one level lower, measured below the target; or refused naming what
# limits it; the replayed map gives the same bundle bytes.
. "$QLLC_SOURCE_DIR/tests/cli/min_sqnr_lib.sh"
D=$QLLC_SOURCE_DIR/tests/quant_e2e/data

check_targets cnn_bn_pool "$D/cnn_bn_pool/model.onnx" "$D/cnn_bn_pool/calib.npy" "$D/cnn_bn_pool/eval_x.npy" "3 10 20 30"

finish min_sqnr_cnn_test
