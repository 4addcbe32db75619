/* src/ir/tensor_io.c: tensors in and out of files (.npy and ONNX TensorProto .pb).
 *
 * Reading picks the format by content, not by extension: a file that starts with the npy magic
 * "\x93NUMPY" is parsed as .npy (versions 1.0, 2.0 and 3.0); anything else is decoded as an ONNX
 * TensorProto with protobuf-c. Both paths produce a dense row-major qllc_tensor whose `data` and
 * `name` are malloc'd and released by qllc_tensor_free.
 *
 * Element kinds: f32, f64 (converted to f32), i8, u8, i16, i32, i64 and bool (read as u8, one byte per
 * element). Anything else (big-endian data, fortran order, f16, strings, unsigned wider than 8 bits,
 * external data) is QLLC_ERR_UNSUPPORTED naming the type. The hosts qllc runs on (x86_64, aarch64)
 * are little-endian, so little-endian payloads are copied as they are.
 *
 * Writing produces .npy version 1.0 with the header padded with spaces and a final newline so the
 * data starts at a multiple of 64 bytes, as numpy itself does.
 *
 * .npz (numpy's np.savez / np.savez_compressed) is a zip archive of .npy files, one per array, named
 * "<array>.npy". It is recognised by the zip magic "PK\x03\x04"; the central directory is read (zip64
 * sizes and offsets included, as numpy writes them), each entry is stored (method 0) or deflated
 * (method 8, inflated with zlib) and checked against its CRC-32, then parsed as a .npy. Written .npz
 * files are stored (no compression), with CRCs, readable by np.load.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "ir.h"
#include "onnx/onnx.pb-c.h"

/* A file read whole into memory. */
typedef struct blob {
  uint8_t *p;
  size_t n;
} blob;

static qllc_status io_fail(qllc_diag *diag, qllc_status st, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* qllc_fail with "<path>: " in front of the message and diag->file set. */
static qllc_status io_fail(qllc_diag *diag, qllc_status st, const char *path, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  qllc_fail(diag, st, NULL, "%s: %s", path, msg);
  qllc_diag_set_file(diag, path);
  return st;
}

/* numel of dims[0..rank), or -1 on a negative dim or overflow of the byte count. */
static int64_t count_elems(uint32_t rank, const int64_t *dims, size_t elem_size) {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return -1;
    if (dims[i] != 0 && n > (INT64_MAX / (int64_t)elem_size) / dims[i])
      return -1;
    n *= dims[i];
  }
  return n;
}

static void tensor_init(qllc_tensor *t) {
  memset(t, 0, sizeof *t);
  t->scale = 1.0f;
}

/* Allocates t->data for numel elements of t->elem (at least one byte, so empty tensors have data). */
static int tensor_alloc(qllc_tensor *t, int64_t numel) {
  int64_t bytes;
  if (qllc_mul_size(numel, (int64_t)qllc_elem_size(t->elem), &bytes) || bytes > QLLC_MAX_TENSOR_BYTES)
    return 0;
  t->data = malloc(bytes ? (size_t)bytes : 1);
  return t->data != NULL;
}

/* ---- .npy ------------------------------------------------------------------------------------ */

/* A cursor over the header text, a Python dict literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } */
typedef struct hcur {
  const char *s, *end;
} hcur;

static void skip_ws(hcur *c) {
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r'))
    c->s++;
}

static int eat(hcur *c, char ch) {
  skip_ws(c);
  if (c->s < c->end && *c->s == ch) {
    c->s++;
    return 1;
  }
  return 0;
}

/* A quoted string ('...' or "..."), copied into buf (truncated to size-1). */
static int parse_str(hcur *c, char *buf, size_t size) {
  skip_ws(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"'))
    return 0;
  char q = *c->s++;
  size_t n = 0;
  while (c->s < c->end && *c->s != q) {
    if (n + 1 < size)
      buf[n++] = *c->s;
    c->s++;
  }
  if (c->s >= c->end)
    return 0;
  c->s++;
  buf[n] = 0;
  return 1;
}

/* The shape tuple: "()", "(3,)", "(2, 3)". Old files may write longs as "3L". */
static int parse_shape(hcur *c, uint32_t *rank, int64_t *dims, int *too_many) {
  if (!eat(c, '('))
    return 0;
  *rank = 0;
  for (;;) {
    if (eat(c, ')'))
      return 1;
    skip_ws(c);
    if (c->s >= c->end || *c->s < '0' || *c->s > '9')
      return 0;
    int64_t v = 0;
    while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
      if (v > (INT64_MAX - 9) / 10)
        return 0;
      v = v * 10 + (*c->s - '0');
      c->s++;
    }
    if (c->s < c->end && (*c->s == 'L' || *c->s == 'l'))
      c->s++;
    if (*rank >= QLLC_MAX_RANK) {
      *too_many = 1;
    } else {
      dims[*rank] = v;
    }
    (*rank)++;
    if (!eat(c, ',')) {
      if (!eat(c, ')'))
        return 0;
      return 1;
    }
  }
}

static int parse_bool(hcur *c, int *out) {
  skip_ws(c);
  size_t left = (size_t)(c->end - c->s);
  if (left >= 4 && !strncmp(c->s, "True", 4)) {
    c->s += 4;
    *out = 1;
    return 1;
  }
  if (left >= 5 && !strncmp(c->s, "False", 5)) {
    c->s += 5;
    *out = 0;
    return 1;
  }
  return 0;
}

/* Maps an npy descr to an element kind. *from_f64 is set for '<f8' (converted on read). */
static int npy_descr(const char *d, qllc_elem_kind *elem, size_t *file_size, int *from_f64) {
  *from_f64 = 0;
  if (!strcmp(d, "<f4")) {
    *elem = QLLC_F32;
    *file_size = 4;
  } else if (!strcmp(d, "<f8")) {
    *elem = QLLC_F32;
    *file_size = 8;
    *from_f64 = 1;
  } else if (!strcmp(d, "|i1") || !strcmp(d, "<i1")) {
    *elem = QLLC_I8;
    *file_size = 1;
  } else if (!strcmp(d, "|u1") || !strcmp(d, "<u1") || !strcmp(d, "|b1") || !strcmp(d, "<b1")) {
    *elem = QLLC_U8;
    *file_size = 1;
  } else if (!strcmp(d, "<i2")) {
    *elem = QLLC_I16;
    *file_size = 2;
  } else if (!strcmp(d, "<i4")) {
    *elem = QLLC_I32;
    *file_size = 4;
  } else if (!strcmp(d, "<i8")) {
    *elem = QLLC_I64;
    *file_size = 8;
  } else {
    return 0;
  }
  return 1;
}

/* Parses the .npy in b into *out. With total (and out NULL), parses only the header and sets *total to
 * the bytes the whole file needs (header and data). */
static qllc_status read_npy(const char *path, const blob *b, qllc_tensor *out, size_t *total, qllc_diag *diag) {
  if (b->n < 10)
    return io_fail(diag, QLLC_ERR_PARSE, path, "truncated .npy header: %zu bytes", b->n);
  int major = b->p[6], minor = b->p[7];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)b->p[8] | (size_t)b->p[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b->n < 12)
      return io_fail(diag, QLLC_ERR_PARSE, path, "truncated .npy header: %zu bytes", b->n);
    hlen = (size_t)b->p[8] | (size_t)b->p[9] << 8 | (size_t)b->p[10] << 16 | (size_t)b->p[11] << 24;
    hstart = 12;
  } else {
    return io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npy format version %d.%d (1.0, 2.0 and 3.0 are read)",
                   major, minor);
  }
  if (hlen > b->n - hstart)
    return io_fail(diag, QLLC_ERR_PARSE, path, "truncated .npy header: expected %zu bytes, found %zu", hlen,
                   b->n - hstart);

  char descr[64] = "";
  int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0, too_many = 0;
  uint32_t rank = 0;
  int64_t dims[QLLC_MAX_RANK] = {0};
  hcur c = {(const char *)b->p + hstart, (const char *)b->p + hstart + hlen};
  if (!eat(&c, '{'))
    return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: expected '{'");
  for (;;) {
    if (eat(&c, '}'))
      break;
    char key[64];
    if (!parse_str(&c, key, sizeof key) || !eat(&c, ':'))
      return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: expected 'key':");
    if (!strcmp(key, "descr")) {
      if (!parse_str(&c, descr, sizeof descr))
        return io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npy descr is not a simple type string");
      have_descr = 1;
    } else if (!strcmp(key, "fortran_order")) {
      if (!parse_bool(&c, &fortran))
        return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: fortran_order is not True/False");
      have_order = 1;
    } else if (!strcmp(key, "shape")) {
      if (!parse_shape(&c, &rank, dims, &too_many))
        return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: bad shape tuple");
      have_shape = 1;
    } else {
      return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: unknown key '%s'", key);
    }
    if (!eat(&c, ',')) {
      if (!eat(&c, '}'))
        return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: expected ',' or '}'");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: missing %s",
                   !have_descr ? "'descr'" : !have_order ? "'fortran_order'" : "'shape'");
  if (fortran)
    return io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npy in fortran order (save a C-contiguous array)");
  if (too_many)
    return io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npy of rank %u (at most %d)", rank, QLLC_MAX_RANK);

  qllc_elem_kind elem;
  size_t fsize;
  int from_f64;
  if (!npy_descr(descr, &elem, &fsize, &from_f64))
    return io_fail(diag, QLLC_ERR_UNSUPPORTED, path,
                   ".npy dtype '%s' (read: <f4 <f8 |i1 |u1 <i2 <i4 <i8 |b1)", descr);
  int64_t numel = count_elems(rank, dims, fsize);
  if (numel < 0)
    return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npy header: shape too large");
  int64_t bytes;
  if (qllc_shape_bytes((qllc_elem)elem, (int)rank, dims, &bytes))
    return io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npy tensor larger than %lld bytes (the largest tensor qllc takes)",
                   (long long)QLLC_MAX_TENSOR_BYTES);
  size_t need = (size_t)numel * fsize, have = b->n - hstart - hlen;
  if (total) {
    *total = hstart + hlen + need;
    return QLLC_OK;
  }
  if (have < need)
    return io_fail(diag, QLLC_ERR_PARSE, path, "truncated .npy data: expected %zu bytes, found %zu", need, have);

  qllc_tensor t;
  tensor_init(&t);
  t.elem = elem;
  t.rank = rank;
  memcpy(t.dims, dims, sizeof dims);
  if (!tensor_alloc(&t, numel))
    return io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory for %zu bytes", need);
  const uint8_t *src = b->p + hstart + hlen;
  if (from_f64) {
    float *dst = t.data;
    for (int64_t i = 0; i < numel; i++) {
      double d;
      memcpy(&d, src + 8 * i, 8);
      dst[i] = (float)d;
    }
  } else if (need) {
    memcpy(t.data, src, need);
  }
  *out = t;
  return QLLC_OK;
}

/* ---- ONNX TensorProto .pb ---------------------------------------------------------------------- */

static qllc_status read_pb(const char *path, const blob *b, qllc_tensor *out, qllc_diag *diag) {
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, b->n, b->p);
  if (!tp)
    return io_fail(diag, QLLC_ERR_PARSE, path, "neither a .npy file nor an ONNX TensorProto");
  qllc_status st = QLLC_OK;
  qllc_tensor t;
  tensor_init(&t);
  int32_t dt = tp->has_data_type ? tp->data_type : 0;
  size_t fsize = 0; /* bytes per element in raw_data */
  switch (dt) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: t.elem = QLLC_F32; fsize = 4; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: t.elem = QLLC_F32; fsize = 8; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: t.elem = QLLC_U8; fsize = 1; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: t.elem = QLLC_U8; fsize = 1; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: t.elem = QLLC_I8; fsize = 1; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: t.elem = QLLC_I16; fsize = 2; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: t.elem = QLLC_I32; fsize = 4; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: t.elem = QLLC_I64; fsize = 8; break;
  case 0:
    st = io_fail(diag, QLLC_ERR_PARSE, path, "neither a .npy file nor an ONNX TensorProto (no data_type)");
    goto done;
  default:
    st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, "TensorProto data_type %d (read: float, double, "
                 "int8, uint8, int16, int32, int64, bool)", (int)dt);
    goto done;
  }
  if (tp->n_external_data || (tp->has_data_location &&
                              tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)) {
    st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, "TensorProto with external data");
    goto done;
  }
  if (tp->segment) {
    st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, "segmented TensorProto");
    goto done;
  }
  if (tp->n_dims > QLLC_MAX_RANK) {
    st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, "TensorProto of rank %zu (at most %d)", tp->n_dims,
                 QLLC_MAX_RANK);
    goto done;
  }
  t.rank = (uint32_t)tp->n_dims;
  for (size_t i = 0; i < tp->n_dims; i++)
    t.dims[i] = tp->dims[i];
  const char *tname = tp->name && tp->name[0] ? tp->name : "(unnamed)";
  int64_t numel = count_elems(t.rank, t.dims, fsize);
  if (numel < 0) {
    st = io_fail(diag, QLLC_ERR_PARSE, path, "TensorProto '%s' with a negative or too large shape", tname);
    goto done;
  }
  int64_t bytes;
  if (qllc_shape_bytes((qllc_elem)t.elem, (int)t.rank, t.dims, &bytes)) {
    st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, "TensorProto '%s' is larger than %lld bytes (the largest tensor qllc takes)",
                 tname, (long long)QLLC_MAX_TENSOR_BYTES);
    goto done;
  }
  size_t n = (size_t)numel;
  /* Typed fields: float_data, double_data, int64_data, and int32_data for every narrower integer. */
  size_t have = 0;
  const char *field = "raw_data";
  switch (dt) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: have = tp->n_float_data; field = "float_data"; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: have = tp->n_double_data; field = "double_data"; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: have = tp->n_int64_data; field = "int64_data"; break;
  default: have = tp->n_int32_data; field = "int32_data"; break;
  }
  /* the data the file carries must match the dims before anything of the claimed size is allocated */
  size_t need = n * fsize; /* <= 2^51: count_elems and qllc_shape_bytes passed */
  if (tp->has_raw_data && tp->raw_data.len != need) {
    st = io_fail(diag, QLLC_ERR_PARSE, path, "TensorProto '%s' raw_data: expected %zu bytes, found %zu", tname, need,
                 tp->raw_data.len);
    goto done;
  }
  if (!tp->has_raw_data && have != n) {
    st = io_fail(diag, QLLC_ERR_PARSE, path, "TensorProto '%s' %s: expected %zu elements, found %zu", tname, field, n, have);
    goto done;
  }
  if (!tensor_alloc(&t, numel)) {
    st = io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory");
    goto done;
  }
  if (tp->has_raw_data) {
    if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
      float *dst = t.data;
      for (size_t i = 0; i < n; i++) {
        double d;
        memcpy(&d, tp->raw_data.data + 8 * i, 8);
        dst[i] = (float)d;
      }
    } else if (need) {
      memcpy(t.data, tp->raw_data.data, need);
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      switch (dt) {
      case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: ((float *)t.data)[i] = tp->float_data[i]; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: ((float *)t.data)[i] = (float)tp->double_data[i]; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: ((int64_t *)t.data)[i] = tp->int64_data[i]; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: ((int32_t *)t.data)[i] = tp->int32_data[i]; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: ((int16_t *)t.data)[i] = (int16_t)tp->int32_data[i]; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: ((int8_t *)t.data)[i] = (int8_t)tp->int32_data[i]; break;
      default: ((uint8_t *)t.data)[i] = (uint8_t)tp->int32_data[i]; break; /* UINT8, BOOL */
      }
    }
  }
  if (tp->name && tp->name[0]) {
    size_t len = strlen(tp->name) + 1;
    t.name = malloc(len);
    if (t.name)
      memcpy(t.name, tp->name, len);
    else {
      st = io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory");
      goto done;
    }
  }
done:
  onnx__tensor_proto__free_unpacked(tp, NULL);
  if (st == QLLC_OK)
    *out = t;
  else
    qllc_tensor_free(&t);
  return st;
}

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- .npz (zip of .npy) ------------------------------------------------------------------------ */

static const uint8_t zip_magic[4] = {'P', 'K', 3, 4};

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Reads every array of the .npz in b into a new array of tensors (*out, *n). */
static qllc_status read_npz(const char *path, const blob *b, qllc_tensor **out, int *n, qllc_diag *diag) {
  *out = NULL, *n = 0;
  /* the end of central directory record: the last "PK\5\6" within the final 64 KiB + 22 bytes */
  size_t eocd = SIZE_MAX;
  for (size_t k = b->n >= 22 ? b->n - 22 + 1 : 0; k-- > 0 && b->n - k <= 65557;)
    if (!memcmp(b->p + k, "PK\5\6", 4)) {
      eocd = k;
      break;
    }
  if (eocd == SIZE_MAX) return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: no zip central directory");
  uint64_t count = rd16(b->p + eocd + 10), cd = rd32(b->p + eocd + 16);
  if ((count == 0xffff || cd == 0xffffffffu) && eocd >= 20 && !memcmp(b->p + eocd - 20, "PK\6\7", 4)) {
    uint64_t z64 = rd64(b->p + eocd - 20 + 8); /* the zip64 end of central directory record */
    if (z64 > b->n || b->n - z64 < 56 || memcmp(b->p + z64, "PK\6\6", 4))
      return io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: bad zip64 end record");
    count = rd64(b->p + z64 + 32), cd = rd64(b->p + z64 + 48);
  }
  if (count == 0) return io_fail(diag, QLLC_ERR_INVALID, path, ".npz holds no arrays");
  if (count > 4096) return io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npz holds %llu arrays (at most 4096)", (unsigned long long)count);
  qllc_tensor *ts = calloc((size_t)count, sizeof *ts);
  if (!ts) return io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory");
  qllc_status st = QLLC_OK;
  uint64_t at = cd;
  int got = 0;
  for (uint64_t e = 0; e < count && st == QLLC_OK; e++) {
    if (at > b->n || b->n - at < 46 || memcmp(b->p + at, "PK\1\2", 4)) {
      st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: bad central directory entry %llu", (unsigned long long)e);
      break;
    }
    const uint8_t *c = b->p + at;
    uint32_t method = rd16(c + 10), crc = rd32(c + 16), nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24), loc = rd32(c + 42);
    if (b->n - at - 46 < (uint64_t)nlen + xlen + clen) {
      st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: truncated central directory");
      break;
    }
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(nlen < 255 ? nlen : 255), (const char *)c + 46);
    /* zip64 extra field: the 0xffffffff fields follow in the order usize, csize, offset */
    for (const uint8_t *x = c + 46 + nlen, *xe = x + xlen; x + 4 <= xe;) {
      uint32_t id = rd16(x), len = rd16(x + 2);
      const uint8_t *v = x + 4, *ve = v + len > xe ? xe : v + len;
      if (id == 1) {
        if (usize == 0xffffffffu && v + 8 <= ve) usize = rd64(v), v += 8;
        if (csize == 0xffffffffu && v + 8 <= ve) csize = rd64(v), v += 8;
        if (loc == 0xffffffffu && v + 8 <= ve) loc = rd64(v), v += 8;
      }
      x += 4 + len;
    }
    at += 46 + (uint64_t)nlen + xlen + clen;
    if (loc > b->n || b->n - loc < 30 || memcmp(b->p + loc, zip_magic, 4)) {
      st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: bad local header of '%s'", name);
      break;
    }
    uint64_t data = loc + 30 + rd16(b->p + loc + 26) + rd16(b->p + loc + 28);
    if (data > b->n || b->n - data < csize) {
      st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: '%s' is truncated", name);
      break;
    }
    size_t len = strlen(name);
    if (len < 5 || strcmp(name + len - 4, ".npy")) {
      st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npz entry '%s' is not a .npy array", name);
      break;
    }
    name[len - 4] = 0;
    if (usize > QLLC_MAX_TENSOR_BYTES + QLLC_NPY_SLACK_BYTES) {
      st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, ".npz array '%s' is larger than %lld bytes", name,
                   (long long)QLLC_MAX_TENSOR_BYTES);
      break;
    }
    blob ent = {NULL, (size_t)usize};
    uint8_t *own = NULL;
    if (method == 0) {
      if (csize != usize) st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: stored '%s' has two sizes", name);
      ent.p = b->p + data;
    } else if (method == 8) {
      own = malloc(usize ? (size_t)usize : 1);
      z_stream z;
      memset(&z, 0, sizeof z);
      if (!own || inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        st = io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory inflating '%s'", name);
      } else {
        int zr = Z_OK;
        uint64_t in_left = csize, out_left = usize;
        z.next_in = b->p + data, z.next_out = own;
        while (zr == Z_OK) { /* avail_* are 32-bit: feed large entries in pieces */
          if (!z.avail_in) z.avail_in = in_left > 0x40000000u ? 0x40000000u : (uInt)in_left, in_left -= z.avail_in;
          if (!z.avail_out) z.avail_out = out_left > 0x40000000u ? 0x40000000u : (uInt)out_left, out_left -= z.avail_out;
          zr = inflate(&z, Z_NO_FLUSH);
          if (zr == Z_BUF_ERROR && ((!z.avail_in && in_left) || (!z.avail_out && out_left))) zr = Z_OK; /* refill */
        }
        uint64_t made = (uint64_t)(z.next_out - own);
        inflateEnd(&z);
        if (zr != Z_STREAM_END || made != usize)
          st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: '%s' does not inflate to its %llu bytes", name,
                       (unsigned long long)usize);
      }
      ent.p = own;
    } else {
      st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path,
                   ".npz entry '%s' is compressed with zip method %u (read: 0 stored, 8 deflate, as np.savez and "
                   "np.savez_compressed write)", name, method);
    }
    if (st == QLLC_OK) {
      uLong crc_got = crc32(0L, Z_NULL, 0);
      for (uint64_t off = 0; off < usize;) {
        uInt piece = usize - off > 0x40000000u ? 0x40000000u : (uInt)(usize - off);
        crc_got = crc32(crc_got, ent.p + off, piece);
        off += piece;
      }
      if ((uint32_t)crc_got != crc)
        st = io_fail(diag, QLLC_ERR_PARSE, path, "malformed .npz: '%s' fails its CRC-32 check", name);
    }
    if (st == QLLC_OK) {
      if (ent.n < 6 || memcmp(ent.p, npy_magic, 6))
        st = io_fail(diag, QLLC_ERR_PARSE, path, ".npz entry '%s.npy' is not a .npy file", name);
      else {
        char where[1024];
        snprintf(where, sizeof where, "%s (array '%s')", path, name);
        st = read_npy(where, &ent, &ts[got], NULL, diag);
        if (st == QLLC_OK) {
          if (!(ts[got].name = strdup(name))) st = io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory");
          got++;
        }
      }
    }
    free(own);
  }
  if (st != QLLC_OK) {
    for (int i = 0; i < got; i++) qllc_tensor_free(&ts[i]);
    free(ts);
    qllc_diag_set_file(diag, path);
    return st;
  }
  *out = ts, *n = got;
  return QLLC_OK;
}

/* ---- public ------------------------------------------------------------------------------------ */

void qllc_tensor_free(qllc_tensor *t) {
  if (!t)
    return;
  free(t->name);
  free(t->data);
  t->name = NULL;
  t->data = NULL;
}

/* ---- the read limit of a tensor file (docs/limits.md) ------------------------------------------ */

typedef struct tensor_limit {
  const char *path;
  int not_pb; /* the first bytes are neither .npy nor protobuf */
} tensor_limit;

/* The bytes a tensor file may have, from its first 64 KiB: a .npy its header and data plus
 * QLLC_NPY_SLACK_BYTES (a header that does not parse stops the read: read_npy reports it); a .pb up to
 * QLLC_MAX_PB_TENSOR_FILE_BYTES, unless its first bytes are not protobuf fields at all (/dev/zero). */
static uint64_t tensor_file_limit(const uint8_t *head, size_t n, void *ctx, uint64_t limit) {
  tensor_limit *tl = ctx;
  if (n >= 4 && !memcmp(head, zip_magic, 4)) return QLLC_MAX_TENSOR_BYTES; /* .npz: its arrays, each checked */
  if (n >= 6 && !memcmp(head, npy_magic, 6)) {
    blob h = {(uint8_t *)head, n};
    size_t total = 0;
    if (read_npy(tl->path, &h, NULL, &total, NULL) != QLLC_OK) return QLLC_READ_STOP;
    return (uint64_t)total + QLLC_NPY_SLACK_BYTES;
  }
  if (qllc_proto_head_check(head, n) != 0) { /* not a TensorProto: stop here */
    tl->not_pb = 1;
    return QLLC_READ_STOP;
  }
  return limit;
}

qllc_status qllc_tensor_read_all(const char *path, qllc_tensor **out, int *n, qllc_diag *diag) {
  if (!path || !out || !n)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_tensor_read_all: NULL %s", path ? "output" : "path");
  *out = NULL, *n = 0;
  blob b;
  tensor_limit tl = {path, 0};
  qllc_status st = qllc_read_file_ex(path, "tensor file", QLLC_MAX_PB_TENSOR_FILE_BYTES, tensor_file_limit, &tl, &b.p,
                                     &b.n, diag);
  if (st != QLLC_OK)
    return st;
  if (b.n >= 4 && !memcmp(b.p, zip_magic, 4)) {
    st = read_npz(path, &b, out, n, diag);
    free(b.p);
    return st;
  }
  qllc_tensor *t = calloc(1, sizeof *t);
  if (!t)
    st = io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory");
  else if (tl.not_pb)
    st = io_fail(diag, QLLC_ERR_PARSE, path, "neither a .npy file nor an ONNX TensorProto");
  else if (b.n >= 6 && !memcmp(b.p, npy_magic, 6))
    st = read_npy(path, &b, t, NULL, diag);
  else
    st = read_pb(path, &b, t, diag);
  free(b.p);
  if (st != QLLC_OK) {
    free(t);
    return st;
  }
  *out = t, *n = 1;
  return QLLC_OK;
}

qllc_status qllc_tensor_read_named(const char *path, const char *name, qllc_tensor *out, qllc_diag *diag) {
  if (!path || !out)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_tensor_read_named: NULL %s", path ? "output" : "path");
  tensor_init(out);
  qllc_tensor *all = NULL;
  int n = 0, pick = -1;
  qllc_status st = qllc_tensor_read_all(path, &all, &n, diag);
  if (st != QLLC_OK)
    return st;
  for (int i = 0; i < n; i++)
    if (n == 1 || (all[i].name && name && !strcmp(all[i].name, name)))
      pick = i;
  if (pick < 0) {
    char names[600] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof names - 80; i++)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "", all[i].name);
    st = io_fail(diag, QLLC_ERR_INVALID, path, "no array named '%s' for input '%s' (arrays: %s)", name ? name : "",
                 name ? name : "", names);
  } else {
    *out = all[pick];
    memset(&all[pick], 0, sizeof all[pick]);
  }
  for (int i = 0; i < n; i++)
    qllc_tensor_free(&all[i]);
  free(all);
  return st;
}

qllc_status qllc_tensor_read(const char *path, qllc_tensor *out, qllc_diag *diag) {
  if (!path || !out)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_tensor_read: NULL %s", path ? "output" : "path");
  tensor_init(out);
  qllc_tensor *all = NULL;
  int n = 0;
  qllc_status st = qllc_tensor_read_all(path, &all, &n, diag);
  if (st != QLLC_OK)
    return st;
  if (n == 1) {
    *out = all[0];
    free(all);
    return QLLC_OK;
  }
  char names[600] = "";
  size_t used = 0;
  for (int i = 0; i < n && used < sizeof names - 80; i++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "", all[i].name);
  for (int i = 0; i < n; i++) qllc_tensor_free(&all[i]);
  free(all);
  return io_fail(diag, QLLC_ERR_INVALID, path, ".npz holds %d arrays (%s) where one tensor is read: give each input "
                 "its array (NAME=FILE.npz takes the array called NAME)", n, names);
}

static const char *npy_descr_of(qllc_elem_kind k) {
  switch (k) {
  case QLLC_F32: return "<f4";
  case QLLC_I8: return "|i1";
  case QLLC_U8: return "|u1";
  case QLLC_I16: return "<i2";
  case QLLC_I32: return "<i4";
  case QLLC_I64: return "<i8";
  }
  return NULL;
}

/* The .npy header of t (magic, version 1.0, little-endian uint16 length, dict text padded with spaces and
 * ended by '\n' so that 10 + length is a multiple of 64) into head; its length, or 0 when t cannot be
 * written (the error in diag, naming path). *bytes gets the data's size. */
static size_t npy_header(const char *path, const qllc_tensor *t, uint8_t head[640], size_t *bytes, qllc_diag *diag) {
  const char *descr = npy_descr_of(t->elem);
  if (!descr)
    return io_fail(diag, QLLC_ERR_INVALID, path, "cannot write element kind %d", (int)t->elem), 0;
  if (t->rank > QLLC_MAX_RANK)
    return io_fail(diag, QLLC_ERR_INVALID, path, "rank %u (at most %d)", t->rank, QLLC_MAX_RANK), 0;
  size_t esize = qllc_elem_size(t->elem);
  int64_t numel = count_elems(t->rank, t->dims, esize);
  if (numel < 0)
    return io_fail(diag, QLLC_ERR_INVALID, path, "negative or too large shape"), 0;
  if (numel > 0 && !t->data)
    return io_fail(diag, QLLC_ERR_INVALID, path, "tensor without data"), 0;
  char dict[512];
  int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (uint32_t i = 0; i < t->rank; i++)
    len += snprintf(dict + len, sizeof dict - len, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
  len += snprintf(dict + len, sizeof dict - len, "%s), }", t->rank == 1 ? "," : "");
  size_t total = 10 + (size_t)len + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t hlen = padded - 10;
  memcpy(head, "\x93NUMPY\x01\x00", 8);
  head[8] = (uint8_t)(hlen & 0xff);
  head[9] = (uint8_t)(hlen >> 8);
  memcpy(head + 10, dict, (size_t)len);
  memset(head + 10 + len, ' ', hlen - (size_t)len - 1);
  head[padded - 1] = '\n';
  *bytes = (size_t)numel * esize;
  return padded;
}

qllc_status qllc_tensor_write_npy(const char *path, const qllc_tensor *t, qllc_diag *diag) {
  if (!path || !t)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_tensor_write_npy: NULL %s", path ? "tensor" : "path");
  uint8_t head[640];
  size_t bytes = 0, padded = npy_header(path, t, head, &bytes, diag);
  if (!padded)
    return diag ? diag->status : QLLC_ERR_INVALID;

  qllc_outfile of; /* all or nothing: a temporary renamed over a regular file; a device in place */
  qllc_status st = qllc_outfile_open(&of, path, diag);
  if (st != QLLC_OK) return st;
  int ok = fwrite(head, 1, padded, of.f) == padded && (bytes == 0 || fwrite(t->data, 1, bytes, of.f) == bytes);
  if (!ok) {
    int e = errno;
    qllc_outfile_abort(&of);
    return io_fail(diag, QLLC_ERR_IO, path, "cannot write: %s", strerror(e ? e : EIO));
  }
  return qllc_outfile_commit(&of, diag);
}

static void wr16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, v & 0xffff), wr16(p + 2, v >> 16); }

/* An uncompressed zip of "<name>.npy" entries (no zip64: each entry and the whole file under 4 GiB). */
qllc_status qllc_tensor_write_npz(const char *path, const qllc_tensor *ts, int n, qllc_diag *diag) {
  if (!path || (!ts && n > 0) || n < 1 || n > 4096)
    return qllc_fail(diag, QLLC_ERR_INVALID, NULL, "qllc_tensor_write_npz: %s", !path ? "NULL path" : "1 to 4096 tensors");
  for (int i = 0; i < n; i++) {
    if (!ts[i].name || !ts[i].name[0] || strlen(ts[i].name) > 250)
      return io_fail(diag, QLLC_ERR_INVALID, path, "tensor %d has no name (or one longer than 250 bytes): .npz arrays are named", i);
    for (int k = 0; k < i; k++)
      if (!strcmp(ts[k].name, ts[i].name)) return io_fail(diag, QLLC_ERR_INVALID, path, "two arrays named '%s'", ts[i].name);
  }
  uint8_t *cd = calloc((size_t)n, 46 + 256);
  if (!cd) return io_fail(diag, QLLC_ERR_NOMEM, path, "out of memory");
  qllc_outfile of;
  qllc_status st = qllc_outfile_open(&of, path, diag);
  if (st != QLLC_OK) {
    free(cd);
    return st;
  }
  uint64_t off = 0;
  size_t cdlen = 0;
  int ok = 1;
  for (int i = 0; i < n && ok && st == QLLC_OK; i++) {
    uint8_t head[640], loc[30];
    size_t bytes = 0, padded = npy_header(path, &ts[i], head, &bytes, diag);
    if (!padded) {
      st = diag ? diag->status : QLLC_ERR_INVALID;
      break;
    }
    uint64_t size = (uint64_t)padded + bytes;
    char name[260];
    size_t nlen = (size_t)snprintf(name, sizeof name, "%s.npy", ts[i].name);
    if (size >= 0xffffffffu || off + 30 + nlen + size >= 0xffffffffu) {
      st = io_fail(diag, QLLC_ERR_UNSUPPORTED, path, "array '%s': .npz files of 4 GiB or more are not written (write .npy)",
                   ts[i].name);
      break;
    }
    uLong crc = crc32(crc32(0L, Z_NULL, 0), head, (uInt)padded);
    for (size_t k = 0; k < bytes;) {
      uInt piece = bytes - k > 0x40000000u ? 0x40000000u : (uInt)(bytes - k);
      crc = crc32(crc, (const uint8_t *)ts[i].data + k, piece);
      k += piece;
    }
    memset(loc, 0, sizeof loc);
    wr32(loc, 0x04034b50), wr16(loc + 4, 20), wr16(loc + 8, 0), wr16(loc + 12, 0x21); /* 1980-01-01 */
    wr32(loc + 14, (uint32_t)crc), wr32(loc + 18, (uint32_t)size), wr32(loc + 22, (uint32_t)size);
    wr16(loc + 26, (uint32_t)nlen);
    uint8_t *c = cd + cdlen;
    wr32(c, 0x02014b50), wr16(c + 4, 20), wr16(c + 6, 20), wr16(c + 14, 0x21);
    wr32(c + 16, (uint32_t)crc), wr32(c + 20, (uint32_t)size), wr32(c + 24, (uint32_t)size);
    wr16(c + 28, (uint32_t)nlen), wr32(c + 42, (uint32_t)off);
    memcpy(c + 46, name, nlen);
    cdlen += 46 + nlen;
    ok = fwrite(loc, 1, 30, of.f) == 30 && fwrite(name, 1, nlen, of.f) == nlen && fwrite(head, 1, padded, of.f) == padded &&
         (bytes == 0 || fwrite(ts[i].data, 1, bytes, of.f) == bytes);
    off += 30 + nlen + size;
  }
  if (ok && st == QLLC_OK) {
    uint8_t end[22];
    memset(end, 0, sizeof end);
    wr32(end, 0x06054b50), wr16(end + 8, (uint32_t)n), wr16(end + 10, (uint32_t)n);
    wr32(end + 12, (uint32_t)cdlen), wr32(end + 16, (uint32_t)off);
    ok = fwrite(cd, 1, cdlen, of.f) == cdlen && fwrite(end, 1, 22, of.f) == 22;
  }
  free(cd);
  if (st != QLLC_OK || !ok) {
    int e = errno;
    qllc_outfile_abort(&of);
    return st != QLLC_OK ? st : io_fail(diag, QLLC_ERR_IO, path, "cannot write: %s", strerror(e ? e : EIO));
  }
  return qllc_outfile_commit(&of, diag);
}
