#include "llvmgen/target.h"
