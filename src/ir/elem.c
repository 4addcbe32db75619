#include "ir.h"
