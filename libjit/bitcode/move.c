/* placeholder: the data movement kernels land here */
#include "kernels_f32.h"
