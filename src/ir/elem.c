/* src/ir/elem.c: element-kind traits, expanded from elem.def. */
#include <string.h>

#include "ir/ir.h"

static const struct {
  const char *name;
  size_t size;
} traits[QLLC_ELEM_COUNT] = {
#define ELEM(E, id, size, name) [id] = {name, size},
#include "elem.def"
#undef ELEM
};

const char *qllc_elem_name(qllc_elem_kind k) {
  if ((int)k < 0 || (int)k >= QLLC_ELEM_COUNT || !traits[k].name) return "?";
  return traits[k].name;
}

size_t qllc_elem_size(qllc_elem_kind k) {
  if ((int)k < 0 || (int)k >= QLLC_ELEM_COUNT) return 0;
  return traits[k].size;
}

int qllc_elem_parse(const char *name, qllc_elem *out) {
  for (int k = 0; k < QLLC_ELEM_COUNT; k++)
    if (traits[k].name && strcmp(traits[k].name, name) == 0) {
      *out = (qllc_elem)k;
      return 0;
    }
  return -1;
}
