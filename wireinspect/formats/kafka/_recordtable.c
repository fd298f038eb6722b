/* The compiled twin of formats/kafka/recordtable.py: the one loop that reads magic-2 records
 * (org.apache.kafka.common.record.DefaultRecord) field by field, into a table of field positions, and
 * two projections of that table (the records as JSON text, the records as columns).
 *
 *   read(data, p, stop, count, max_records) -> (recs bytes, hdrs bytes, n, end, capped, bad)
 *   to_json(recs, hdrs, n, data, dbase, base_offset, base_ts, max_ts, log_append, mode, strict) -> bytes | None
 *   split(recs, hdrs, n, data, dbase, base_offset, base_ts, max_ts, log_append) -> tuple of 9 lists and a size
 *
 * Each returns exactly what its Python twin returns (recordtable._read_records_py, _records_json_py,
 * _split_py; the tables as native int64), or NotImplemented for what it leaves to Python: arguments of
 * other types, a varint or a sum beyond 64 bits. tests/formats/kafka/test_recordtable.py checks the twins
 * against each other on generated, cut and mutated batches. Optional: built by `pip install .` when a C
 * compiler is there; `WIREINSPECT_PURE=1` leaves the work to Python.
 *
 * The slots of a row are recordtable.py's (R = 22 a record, H = 7 a header); keep the two in step.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../codec/jsonout.h"
#include <time.h>

enum { START, END, STATUS, ERRAT, ERRVAL, P_ATTR, LENGTH, ATTR, P_TSD, TSD, P_OD, OD, P_KLEN, KLEN, P_KEY,
       P_VLEN, VLEN, P_VAL, P_HC, HC, H_FIRST, H_COUNT, R };
enum { P_HKLEN, HKLEN, P_HKEY, P_HVLEN, HVLEN, P_HVAL, H_END, H };
enum { OK = 0, TRAILING = 1, FAIL = 4 };
enum { F_LENGTH = 1, F_RECORD_LENGTH, F_EMPTY, F_TSD, F_OD, F_KLEN, F_VLEN, F_HC, F_HKLEN, F_HVLEN };
enum { TRUNCATED = 0, OVERLONG = 1, BAD_VALUE = 2 };

/* Zig-zag varint of at most `most` bytes at *p, reading up to `size` (the buffer's end, as
 * codec/varint.py does). 0 ok (*p moved), 1 truncated, 2 overlong, 3 beyond 64 bits. */
static inline int varint(const unsigned char *d, Py_ssize_t *p, Py_ssize_t size, int most, int64_t *out) {
    uint64_t v = 0;
    int shift = 0;
    Py_ssize_t q = *p;
    for (int i = 0; i < most; i++) {
        if (q >= size) return 1;
        unsigned char b = d[q++];
        if (shift == 63 && (b & 0x7E)) return 3;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            *p = q;
            return 0;
        }
        shift += 7;
    }
    return 2;
}

typedef struct {
    int64_t *v;
    Py_ssize_t len, cap;
} Ints;

static int ints_grow(Ints *a, Py_ssize_t need) {
    if (a->len + need <= a->cap) return 0;
    Py_ssize_t cap = a->cap ? a->cap : 1024;
    while (cap < a->len + need) cap *= 2;
    int64_t *v = PyMem_Realloc(a->v, cap * sizeof(int64_t));
    if (!v) { PyErr_NoMemory(); return -1; }
    a->v = v;
    a->cap = cap;
    return 0;
}

/* The fields after the attributes of the record whose row is `r`, data[q..end): its status; 3 << 8
 * beyond 64 bits; -1 error. */
static int read_fields(const unsigned char *d, Py_ssize_t size, Py_ssize_t q, Py_ssize_t end, int64_t *r,
                       Ints *hdrs) {
    int64_t v;
    int e;
#define VAR(field, most) do { e = varint(d, &q, size, most, &v); if (e == 3) return 3 << 8; \
        if (e) return FAIL * (field) + (e == 1 ? TRUNCATED : OVERLONG); } while (0)
    r[P_TSD] = r[ERRAT] = q;
    VAR(F_TSD, 10);
    if (q > end) return FAIL * F_TSD + BAD_VALUE;
    r[TSD] = v;
    r[P_OD] = q;
    r[ERRAT] = q;
    VAR(F_OD, 5);
    if (q > end) return FAIL * F_OD + BAD_VALUE;
    r[OD] = v;
    for (int which = 0; which < 2; which++) {
        int f = which ? F_VLEN : F_KLEN;
        r[which ? P_VLEN : P_KLEN] = r[ERRAT] = q;
        VAR(f, 5);
        if (v < -1 || (v > 0 && v > end - q) || q > end) { r[ERRVAL] = v; return FAIL * f + BAD_VALUE; }
        r[which ? VLEN : KLEN] = v;
        r[which ? P_VAL : P_KEY] = q;
        if (v > 0) q += v;
    }
    r[P_HC] = r[ERRAT] = q;
    VAR(F_HC, 5);
    if (v < 0 || v > end - q) { r[ERRVAL] = v; return FAIL * F_HC + BAD_VALUE; }
    r[HC] = v;
    int64_t hc = v;
    for (int64_t j = 0; j < hc; j++) {
        int64_t row[H];
        row[P_HKLEN] = r[ERRAT] = q;
        VAR(F_HKLEN, 5);
        if (v < 0 || v > end - q) { r[ERRVAL] = v; return FAIL * F_HKLEN + BAD_VALUE; }
        row[HKLEN] = v;
        row[P_HKEY] = q;
        q += v;
        row[P_HVLEN] = r[ERRAT] = q;
        VAR(F_HVLEN, 5);
        if (v < -1 || (v > 0 && v > end - q) || q > end) { r[ERRVAL] = v; return FAIL * F_HVLEN + BAD_VALUE; }
        row[HVLEN] = v;
        row[P_HVAL] = q;
        if (v > 0) q += v;
        row[H_END] = q;
        if (ints_grow(hdrs, H) < 0) return -1;
        memcpy(hdrs->v + hdrs->len, row, sizeof row);
        hdrs->len += H;
        r[H_COUNT]++;
    }
#undef VAR
    r[ERRAT] = q;
    return q == end ? OK : TRAILING;
}

static PyObject *read_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t p, stop, count, max_records;
    if (!PyArg_ParseTuple(args, "y*nnnn", &view, &p, &stop, &count, &max_records)) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    const unsigned char *d = view.buf;
    Py_ssize_t size = view.len;
    if (p < 0 || stop > size || stop < 0) {
        PyBuffer_Release(&view);
        Py_RETURN_NOTIMPLEMENTED;
    }
    Ints recs = {NULL, 0, 0}, hdrs = {NULL, 0, 0};
    Py_ssize_t n = 0;
    int capped = 0, rc = 0; /* rc: 0 ok, 2 NotImplemented, -1 error */
    while (p < stop && n < count) {
        if (n >= max_records) { capped = 1; break; }
        if (ints_grow(&recs, R) < 0) { rc = -1; break; }
        int64_t *r = recs.v + recs.len;
        memset(r, 0, R * sizeof(int64_t));
        recs.len += R;
        n++;
        r[START] = r[ERRAT] = p;
        r[H_FIRST] = hdrs.len / H;
        Py_ssize_t q = p;
        int64_t length;
        int e = varint(d, &q, size, 5, &length);
        if (e == 3) { rc = 2; break; }
        if (e || q > stop) {
            r[END] = stop;
            r[STATUS] = FAIL * F_LENGTH + (e == 1 ? TRUNCATED : e == 2 ? OVERLONG : BAD_VALUE);
            p = stop;
            break;
        }
        r[P_ATTR] = q;
        r[LENGTH] = length;
        if (length < 0 || length > stop - q) {
            r[END] = stop;
            r[STATUS] = FAIL * F_RECORD_LENGTH + BAD_VALUE;
            p = stop;
            break;
        }
        Py_ssize_t end = q + (Py_ssize_t)length;
        r[END] = end;
        p = end;
        if (q >= end) {
            r[STATUS] = FAIL * F_EMPTY + BAD_VALUE;
            r[ERRAT] = q;
            continue;
        }
        r[ATTR] = d[q];
        int s = read_fields(d, size, q + 1, end, r, &hdrs);
        if (s < 0) { rc = -1; break; }
        if (s == 3 << 8) { rc = 2; break; }
        r[STATUS] = s;
    }
    PyBuffer_Release(&view);
    Py_ssize_t bad = 0; /* the records whose status is not OK */
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) bad += recs.v[i * R + STATUS] != OK;
    PyObject *res = NULL;
    if (rc == 0) {
        PyObject *rb = PyBytes_FromStringAndSize((const char *)recs.v, recs.len * (Py_ssize_t)sizeof(int64_t));
        PyObject *hb = PyBytes_FromStringAndSize((const char *)hdrs.v, hdrs.len * (Py_ssize_t)sizeof(int64_t));
        if (rb && hb) res = Py_BuildValue("(OOnnin)", rb, hb, n, p, capped, bad);
        Py_XDECREF(rb);
        Py_XDECREF(hb);
    } else if (rc == 2) res = Py_NewRef(Py_NotImplemented);
    PyMem_Free(recs.v);
    PyMem_Free(hdrs.v);
    return res;
}

/* The int64 rows of a table argument (a buffer of native int64: what read returns, cast), or -1
 * (not one: NotImplemented). */
static int table_view(PyObject *o, Py_buffer *v, Py_ssize_t need) {
    if (!PyObject_CheckBuffer(o) || PyObject_GetBuffer(o, v, PyBUF_SIMPLE) < 0) { PyErr_Clear(); return -1; }
    if (v->len < need * (Py_ssize_t)sizeof(int64_t)) { PyBuffer_Release(v); return -1; }
    return 0;
}

/* Could these bytes (n >= 5) get a Schema Registry label with no registry at hand? recordtable.may_be_framed. */
static int may_be_framed(const unsigned char *b, int64_t n) {
    if (b[0] == 0x00) return b[1] == 0;
    if (b[0] == 0x01) return n >= 17 && (b[7] & 0xF0) == 0x40 && (b[9] & 0xC0) == 0x80;
    if (b[0] == 0x03) return n >= 18 && (b[1] == 0x00 || b[1] == 0x05) && (b[8] & 0xF0) == 0x40 && (b[10] & 0xC0) == 0x80;
    return 0;
}

static inline int framed(const unsigned char *b, int64_t n, int strict) {
    return n >= 5 && (b[0] == 0x00 || b[0] == 0x01 || b[0] == 0x03) && (strict || may_be_framed(b, n));
}

/* Common arguments of the projections. */
typedef struct {
    Py_buffer rv, hv, dv;
    const int64_t *r, *h;
    const unsigned char *d;
    Py_ssize_t n;
    int has_base;
    int64_t dbase, base_offset, base_ts, max_ts;
    int log_append;
} Proj;

/* 0 ok, 1 NotImplemented. */
static int proj_open(Proj *j, PyObject *recs, PyObject *hdrs, Py_ssize_t n, PyObject *data, PyObject *dbase,
                     PyObject *bo, PyObject *bt, PyObject *mt, int log_append) {
    int overflow;
    j->n = n;
    j->log_append = log_append;
    j->has_base = dbase != Py_None;
    if (j->has_base) {
        j->dbase = PyLong_AsLongLongAndOverflow(dbase, &overflow);
        if (overflow || PyErr_Occurred()) { PyErr_Clear(); return 1; }
    }
    PyObject *ints[3] = {bo, bt, mt};
    int64_t *outs[3] = {&j->base_offset, &j->base_ts, &j->max_ts};
    for (int i = 0; i < 3; i++) {
        if (!PyLong_CheckExact(ints[i])) return 1;
        *outs[i] = PyLong_AsLongLongAndOverflow(ints[i], &overflow);
        if (overflow || PyErr_Occurred()) { PyErr_Clear(); return 1; }
    }
    if (n < 0 || table_view(recs, &j->rv, n * R) < 0) return 1;
    j->r = j->rv.buf;
    Py_ssize_t nh = 0;
    for (Py_ssize_t i = 0; i < n; i++) nh += j->r[i * R + H_COUNT];
    if (table_view(hdrs, &j->hv, nh * H) < 0) { PyBuffer_Release(&j->rv); return 1; }
    j->h = j->hv.buf;
    if (PyObject_GetBuffer(data, &j->dv, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyBuffer_Release(&j->rv);
        PyBuffer_Release(&j->hv);
        return 1;
    }
    j->d = j->dv.buf;
    return 0;
}

static void proj_close(Proj *j) {
    PyBuffer_Release(&j->rv);
    PyBuffer_Release(&j->hv);
    PyBuffer_Release(&j->dv);
}

/* A record's absolute offset, timestamp and position: 0 ok, 1 beyond 64 bits. */
static inline int absolute(const Proj *j, const int64_t *r, int64_t *off, int64_t *ts, int64_t *pos) {
    if (__builtin_add_overflow(j->base_offset, r[OD], off)) return 1;
    if (j->log_append) *ts = j->max_ts;
    else if (__builtin_add_overflow(j->base_ts, r[TSD], ts)) return 1;
    if (j->has_base && __builtin_add_overflow(j->dbase, r[START], pos)) return 1;
    return 0;
}

static int put_value(Out *o, const unsigned char *s, int64_t n, int mode) {
    if (n < 0) {
        if (grow(o, 4) < 0) return -1;
        put(o, "null", 4);
        return 0;
    }
    return mode == 2 ? put_text(o, s, (Py_ssize_t)n) : put_bytes(o, s, (Py_ssize_t)n, mode == 1);
}

static PyObject *to_json(PyObject *self, PyObject *args) {
    PyObject *recs, *hdrs, *data, *dbase, *bo, *bt, *mt;
    Py_ssize_t n;
    int log_append, strict;
    const char *mode_s;
    if (!PyArg_ParseTuple(args, "OOnOOOOOisp", &recs, &hdrs, &n, &data, &dbase, &bo, &bt, &mt, &log_append,
                          &mode_s, &strict)) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    int mode = strcmp(mode_s, "base64") == 0 ? 0 : strcmp(mode_s, "hex") == 0 ? 1 : strcmp(mode_s, "text") == 0 ? 2 : -1;
    Proj j;
    if (mode < 0 || proj_open(&j, recs, hdrs, n, data, dbase, bo, bt, mt, log_append)) Py_RETURN_NOTIMPLEMENTED;
    Out o = {NULL, 0, 0};
    int rc = 0; /* 0 text, 1 None, 2 NotImplemented, -1 error */
    const unsigned char *d = j.d;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        const int64_t *r = j.r + i * R;
        if (framed(d + r[P_KEY], r[KLEN], strict) || framed(d + r[P_VAL], r[VLEN], strict)) { rc = 1; break; }
        const int64_t *hh = j.h + r[H_FIRST] * H;
        for (int64_t k = 0; k < r[HC]; k++) {
            const int64_t *x = hh + k * H;
            if ((x[HKLEN] == 15 || x[HKLEN] == 17) && d[x[P_HKEY]] == '_' && d[x[P_HKEY] + 1] == '_') { rc = 1; break; }
        }
        if (rc) break;
        int64_t off, ts, pos = 0;
        if (absolute(&j, r, &off, &ts, &pos)) { rc = 2; break; }
        if (grow(&o, 160) < 0) { rc = -1; break; }
        if (i) put(&o, ",", 1);
        put(&o, "{\"position\":", 12);
        if (j.has_base) put_int(&o, pos); else put(&o, "null", 4);
        put(&o, ",\"length\":", 10);
        put_int(&o, r[END] - r[START]);
        put(&o, ",\"offset\":", 10);
        put_int(&o, off);
        put(&o, ",\"timestamp\":", 13);
        put_int(&o, ts);
        put(&o, ",\"key\":", 7);
        if (put_value(&o, d + r[P_KEY], r[KLEN], mode) < 0 || grow(&o, 9) < 0) { rc = -1; break; }
        put(&o, ",\"value\":", 9);
        if (put_value(&o, d + r[P_VAL], r[VLEN], mode) < 0 || grow(&o, 12) < 0) { rc = -1; break; }
        put(&o, ",\"headers\":[", 12);
        for (int64_t k = 0; k < r[HC] && rc == 0; k++) {
            const int64_t *x = hh + k * H;
            if (grow(&o, 2) < 0) { rc = -1; break; }
            if (k) put(&o, ",", 1);
            put(&o, "[", 1);
            if (put_text(&o, d + x[P_HKEY], (Py_ssize_t)x[HKLEN]) < 0 || grow(&o, 1) < 0) { rc = -1; break; }
            put(&o, ",", 1);
            if (put_value(&o, d + x[P_HVAL], x[HVLEN], mode) < 0 || grow(&o, 1) < 0) { rc = -1; break; }
            put(&o, "]", 1);
        }
        if (rc) break;
        if (grow(&o, 2) < 0) { rc = -1; break; }
        put(&o, "]}", 2);
    }
    proj_close(&j);
    PyObject *res;
    if (rc == 0) res = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
    else if (rc == 1) res = Py_NewRef(Py_None);
    else if (rc == 2) res = Py_NewRef(Py_NotImplemented);
    else res = NULL;
    PyMem_Free(o.buf);
    return res;
}

/* Header keys as str (UTF-8, backslashreplace), the first NKEYS distinct ones of a batch kept. */
#define NKEYS 16
typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    PyObject *str;
} Key;

static PyObject *key_str(Key *keys, int *nkeys, const unsigned char *s, Py_ssize_t n) {
    for (int i = 0; i < *nkeys; i++)
        if (keys[i].n == n && memcmp(keys[i].s, s, (size_t)n) == 0) return Py_NewRef(keys[i].str);
    PyObject *str = PyUnicode_DecodeUTF8((const char *)s, n, "backslashreplace");
    if (str && *nkeys < NKEYS) {
        keys[*nkeys] = (Key){s, n, Py_NewRef(str)};
        (*nkeys)++;
    }
    return str;
}

static inline int append_new(PyObject *list, PyObject *o) {
    if (!o) return -1;
    int r = PyList_Append(list, o);
    Py_DECREF(o);
    return r;
}

static inline PyObject *bytes_or_none(const unsigned char *s, int64_t n) {
    return n < 0 ? Py_NewRef(Py_None) : PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
}

enum { C_POSITION, C_LENGTH, C_OFFSET, C_TIMESTAMP, C_KEY, C_VALUE, C_HCOUNT, C_HKEY, C_HVAL, NCOLS };

static PyObject *split(PyObject *self, PyObject *args) {
    PyObject *recs, *hdrs, *data, *dbase, *bo, *bt, *mt;
    Py_ssize_t n;
    int log_append, skip = 0;
    if (!PyArg_ParseTuple(args, "OOnOOOOOi|i", &recs, &hdrs, &n, &data, &dbase, &bo, &bt, &mt, &log_append, &skip)) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    Proj j;
    if (proj_open(&j, recs, hdrs, n, data, dbase, bo, bt, mt, log_append)) Py_RETURN_NOTIMPLEMENTED;
    /* every absolute value first: NotImplemented before anything is built */
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t off, ts, pos;
        if (absolute(&j, j.r + i * R, &off, &ts, &pos)) { proj_close(&j); Py_RETURN_NOTIMPLEMENTED; }
    }
    PyObject *cols[NCOLS] = {NULL};
    Key keys[NKEYS];
    int nkeys = 0, rc = 0;
    int64_t size = 0;
    /* skip (SKIP_KEY | SKIP_VALUE | SKIP_HEADERS): those columns are None, their bytes never copied */
    for (int c = 0; c < NCOLS; c++) {
        int skipped = (c == C_KEY && (skip & 1)) || (c == C_VALUE && (skip & 2)) || ((c == C_HKEY || c == C_HVAL) && (skip & 4));
        if (!(cols[c] = skipped ? Py_NewRef(Py_None) : PyList_New(0))) rc = -1;
    }
    const unsigned char *d = j.d;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        const int64_t *r = j.r + i * R;
        int64_t off = 0, ts = 0, pos = 0;
        absolute(&j, r, &off, &ts, &pos);
        if ((j.has_base ? append_new(cols[C_POSITION], PyLong_FromLongLong(pos))
                        : PyList_Append(cols[C_POSITION], Py_None)) < 0 ||
            append_new(cols[C_LENGTH], PyLong_FromLongLong(r[END] - r[START])) < 0 ||
            append_new(cols[C_OFFSET], PyLong_FromLongLong(off)) < 0 ||
            append_new(cols[C_TIMESTAMP], PyLong_FromLongLong(ts)) < 0 ||
            (!(skip & 1) && append_new(cols[C_KEY], bytes_or_none(d + r[P_KEY], r[KLEN])) < 0) ||
            (!(skip & 2) && append_new(cols[C_VALUE], bytes_or_none(d + r[P_VAL], r[VLEN])) < 0) ||
            append_new(cols[C_HCOUNT], PyLong_FromLongLong(r[HC])) < 0) { rc = -1; break; }
        size += (!(skip & 1) && r[KLEN] > 0 ? r[KLEN] : 0) + (!(skip & 2) && r[VLEN] > 0 ? r[VLEN] : 0);
        const int64_t *hh = j.h + r[H_FIRST] * H;
        for (int64_t k = 0; k < (skip & 4 ? 0 : r[HC]); k++) {
            const int64_t *x = hh + k * H;
            if (append_new(cols[C_HKEY], key_str(keys, &nkeys, d + x[P_HKEY], (Py_ssize_t)x[HKLEN])) < 0 ||
                append_new(cols[C_HVAL], bytes_or_none(d + x[P_HVAL], x[HVLEN])) < 0) { rc = -1; break; }
        }
    }
    for (int i = 0; i < nkeys; i++) Py_DECREF(keys[i].str);
    proj_close(&j);
    PyObject *res = NULL;
    if (rc == 0)
        res = Py_BuildValue("(OOOOOOOOOL)", cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7],
                            cols[8], (long long)size);
    for (int c = 0; c < NCOLS; c++) Py_XDECREF(cols[c]);
    return res;
}

/* Bytes as recordtable.line_text shows them: '\\' and '"' escaped by a backslash, undecodable bytes and
 * the characters never printed raw (C0, DEL, C1, U+061C, U+200E/F, U+2028/9, U+202A-E, U+2066-9) as
 * \xNN below 256, \uNNNN above. 0 ok, -1 error. */
/* What put_line_text writes for a byte that is not the start of a well-formed UTF-8 sequence: itself
 * (printable ASCII), '\\' and '"' after a backslash, \xNN (C0, DEL, an undecodable byte); padded to 8
 * bytes, so that one 8-byte copy writes any of them. */
static const char LINE_OUT[256][8] = {
    "\134\170\060\060", "\134\170\060\061", "\134\170\060\062", "\134\170\060\063", "\134\170\060\064", "\134\170\060\065", "\134\170\060\066", "\134\170\060\067",
    "\134\170\060\070", "\134\170\060\071", "\134\170\060\141", "\134\170\060\142", "\134\170\060\143", "\134\170\060\144", "\134\170\060\145", "\134\170\060\146",
    "\134\170\061\060", "\134\170\061\061", "\134\170\061\062", "\134\170\061\063", "\134\170\061\064", "\134\170\061\065", "\134\170\061\066", "\134\170\061\067",
    "\134\170\061\070", "\134\170\061\071", "\134\170\061\141", "\134\170\061\142", "\134\170\061\143", "\134\170\061\144", "\134\170\061\145", "\134\170\061\146",
    "\040", "\041", "\134\042", "\043", "\044", "\045", "\046", "\047",
    "\050", "\051", "\052", "\053", "\054", "\055", "\056", "\057",
    "\060", "\061", "\062", "\063", "\064", "\065", "\066", "\067",
    "\070", "\071", "\072", "\073", "\074", "\075", "\076", "\077",
    "\100", "\101", "\102", "\103", "\104", "\105", "\106", "\107",
    "\110", "\111", "\112", "\113", "\114", "\115", "\116", "\117",
    "\120", "\121", "\122", "\123", "\124", "\125", "\126", "\127",
    "\130", "\131", "\132", "\133", "\134\134", "\135", "\136", "\137",
    "\140", "\141", "\142", "\143", "\144", "\145", "\146", "\147",
    "\150", "\151", "\152", "\153", "\154", "\155", "\156", "\157",
    "\160", "\161", "\162", "\163", "\164", "\165", "\166", "\167",
    "\170", "\171", "\172", "\173", "\174", "\175", "\176", "\134\170\067\146",
    "\134\170\070\060", "\134\170\070\061", "\134\170\070\062", "\134\170\070\063", "\134\170\070\064", "\134\170\070\065", "\134\170\070\066", "\134\170\070\067",
    "\134\170\070\070", "\134\170\070\071", "\134\170\070\141", "\134\170\070\142", "\134\170\070\143", "\134\170\070\144", "\134\170\070\145", "\134\170\070\146",
    "\134\170\071\060", "\134\170\071\061", "\134\170\071\062", "\134\170\071\063", "\134\170\071\064", "\134\170\071\065", "\134\170\071\066", "\134\170\071\067",
    "\134\170\071\070", "\134\170\071\071", "\134\170\071\141", "\134\170\071\142", "\134\170\071\143", "\134\170\071\144", "\134\170\071\145", "\134\170\071\146",
    "\134\170\141\060", "\134\170\141\061", "\134\170\141\062", "\134\170\141\063", "\134\170\141\064", "\134\170\141\065", "\134\170\141\066", "\134\170\141\067",
    "\134\170\141\070", "\134\170\141\071", "\134\170\141\141", "\134\170\141\142", "\134\170\141\143", "\134\170\141\144", "\134\170\141\145", "\134\170\141\146",
    "\134\170\142\060", "\134\170\142\061", "\134\170\142\062", "\134\170\142\063", "\134\170\142\064", "\134\170\142\065", "\134\170\142\066", "\134\170\142\067",
    "\134\170\142\070", "\134\170\142\071", "\134\170\142\141", "\134\170\142\142", "\134\170\142\143", "\134\170\142\144", "\134\170\142\145", "\134\170\142\146",
    "\134\170\143\060", "\134\170\143\061", "\134\170\143\062", "\134\170\143\063", "\134\170\143\064", "\134\170\143\065", "\134\170\143\066", "\134\170\143\067",
    "\134\170\143\070", "\134\170\143\071", "\134\170\143\141", "\134\170\143\142", "\134\170\143\143", "\134\170\143\144", "\134\170\143\145", "\134\170\143\146",
    "\134\170\144\060", "\134\170\144\061", "\134\170\144\062", "\134\170\144\063", "\134\170\144\064", "\134\170\144\065", "\134\170\144\066", "\134\170\144\067",
    "\134\170\144\070", "\134\170\144\071", "\134\170\144\141", "\134\170\144\142", "\134\170\144\143", "\134\170\144\144", "\134\170\144\145", "\134\170\144\146",
    "\134\170\145\060", "\134\170\145\061", "\134\170\145\062", "\134\170\145\063", "\134\170\145\064", "\134\170\145\065", "\134\170\145\066", "\134\170\145\067",
    "\134\170\145\070", "\134\170\145\071", "\134\170\145\141", "\134\170\145\142", "\134\170\145\143", "\134\170\145\144", "\134\170\145\145", "\134\170\145\146",
    "\134\170\146\060", "\134\170\146\061", "\134\170\146\062", "\134\170\146\063", "\134\170\146\064", "\134\170\146\065", "\134\170\146\066", "\134\170\146\067",
    "\134\170\146\070", "\134\170\146\071", "\134\170\146\141", "\134\170\146\142", "\134\170\146\143", "\134\170\146\144", "\134\170\146\145", "\134\170\146\146"
};
static const unsigned char LINE_LEN[256] = {
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4
};

/* Bytes as codec/text.line_text shows them (dump --records): put_escaped with LINE_OUT, the
 * characters never printed raw escaped too. 0 ok, -1 error. */
static int put_line_text(Out *o, const unsigned char *s, Py_ssize_t n) {
    return put_escaped(o, s, n, LINE_OUT, LINE_LEN, 1);
}

#define MAX_MS 253402300799999LL

/* ms since the epoch as codec/times.iso_ms writes it (2023-11-14T22:13:20.080Z), or the number. The text
 * of the last second is kept in `cache` (a batch's records are mostly within one second). */
typedef struct {
    int64_t secs;
    char text[24]; /* YYYY-MM-DDTHH:MM:SS. */
} TimeCache;

static int put_time(Out *o, int64_t ms, TimeCache *cache) {
    if (grow(o, 32) < 0) return -1;
    if (ms < 0 || ms > MAX_MS) { put_int(o, ms); return 0; }
    int64_t secs = ms / 1000;
    if (secs != cache->secs) {
        time_t t = (time_t)secs;
        struct tm tm;
        if (!gmtime_r(&t, &tm)) { put_int(o, ms); return 0; }
        snprintf(cache->text, sizeof cache->text, "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        cache->secs = secs;
    }
    put(o, cache->text, 20);
    int m = (int)(ms % 1000);
    char tail[4] = {(char)('0' + m / 100), (char)('0' + m / 10 % 10), (char)('0' + m % 10), 'Z'};
    put(o, tail, 4);
    return 0;
}

#define PUTS(lit) do { if (grow(&o, sizeof(lit)) < 0) { rc = -1; break; } put(&o, lit, sizeof(lit) - 1); } while (0)

static PyObject *lines(PyObject *self, PyObject *args) {
    PyObject *recs, *hdrs, *data, *dbase, *bo, *bt, *mt;
    Py_ssize_t n, tail_len;
    int log_append;
    const char *tail;
    if (!PyArg_ParseTuple(args, "OOnOOOOOis#", &recs, &hdrs, &n, &data, &dbase, &bo, &bt, &mt, &log_append, &tail,
                          &tail_len)) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    Proj j;
    if (proj_open(&j, recs, hdrs, n, data, dbase, bo, bt, mt, log_append)) Py_RETURN_NOTIMPLEMENTED;
    Out o = {NULL, 0, 0};
    int rc = 0;
    const unsigned char *d = j.d;
    TimeCache times = {-1, {0}};
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        const int64_t *r = j.r + i * R;
        int64_t off, ts, pos = 0;
        if (absolute(&j, r, &off, &ts, &pos)) { rc = 2; break; }
        if (grow(&o, 120) < 0) { rc = -1; break; }
        put(&o, "offset=", 7);
        put_int(&o, off);
        put(&o, " position=", 10);
        if (j.has_base) put_int(&o, pos); else put(&o, "null", 4);
        put(&o, " timestamp=", 11);
        if (put_time(&o, ts, &times) < 0 || grow(&o, 60) < 0) { rc = -1; break; }
        put(&o, " keyLength=", 11);
        put_int(&o, r[KLEN]);
        put(&o, " valueLength=", 13);
        put_int(&o, r[VLEN]);
        put(&o, " headerKeys=[", 13);
        const int64_t *hh = j.h + r[H_FIRST] * H;
        for (int64_t k = 0; k < r[HC]; k++) {
            if (k) PUTS(",");
            if (rc || put_line_text(&o, d + hh[k * H + P_HKEY], (Py_ssize_t)hh[k * H + HKLEN]) < 0) { rc = -1; break; }
        }
        if (rc) break;
        PUTS("] key=");
        for (int which = 0; which < 2 && rc == 0; which++) {
            int64_t l = r[which ? VLEN : KLEN];
            if (which) PUTS(" value=");
            if (rc) break;
            if (l < 0) { PUTS("null"); continue; }
            PUTS("\"");
            if (rc || put_line_text(&o, d + r[which ? P_VAL : P_KEY], (Py_ssize_t)l) < 0) { rc = -1; break; }
            PUTS("\"");
        }
        if (rc) break;
        if (grow(&o, tail_len + 1) < 0) { rc = -1; break; }
        put(&o, tail, tail_len);
        put(&o, "\n", 1);
    }
    proj_close(&j);
    PyObject *res;
    if (rc == 0) res = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
    else if (rc == 2) res = Py_NewRef(Py_NotImplemented);
    else res = NULL;
    PyMem_Free(o.buf);
    return res;
}

/* -- columns as Arrow buffers (recordtable.buffers) ------------------------------------------------ */

/* Whether s[0..n) is well-formed UTF-8 (the strict decoder's rule): Arrow's strings must be. */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        unsigned k = TEXT_CLASS[c];
        if (k < 2 || k > 4 || n - i < (Py_ssize_t)k || !utf8_ok(s + i, (int)k)) return 0;
        i += k;
    }
    return 1;
}

typedef struct {
    Out offsets, data, valid; /* int32 offsets (n + 1, from base), bytes, one byte a value (1: not null) */
    Py_ssize_t n, nulls;
    int64_t base;
} Var;

static int var_init(Var *v, Py_ssize_t n, int64_t base) {
    v->n = 0;
    v->nulls = 0;
    v->base = base;
    if (base < 0 || base > INT32_MAX) return 1;
    if (grow(&v->offsets, 4 * (n + 1)) < 0 || grow(&v->valid, n + 1) < 0) return -1;
    int32_t first = (int32_t)base;
    put(&v->offsets, (const char *)&first, 4);
    return 0;
}

/* Append s[0..len) (len < 0: null). 0 ok, 1 past int32 offsets, -1 error. */
static int var_add(Var *v, const unsigned char *s, int64_t len) {
    if (len < 0) v->nulls++;
    else {
        if (v->base + v->data.len + len > INT32_MAX) return 1;
        if (grow(&v->data, (Py_ssize_t)len) < 0) return -1;
        put(&v->data, (const char *)s, (Py_ssize_t)len);
    }
    v->valid.buf[v->valid.len++] = len >= 0; /* (room made by var_init) */
    int32_t end = (int32_t)(v->base + v->data.len);
    put(&v->offsets, (const char *)&end, 4); /* (room made by var_init) */
    v->n++;
    return 0;
}

static void var_free(Var *v) { PyMem_Free(v->offsets.buf); PyMem_Free(v->data.buf); PyMem_Free(v->valid.buf); }

static PyObject *out_bytes(Out *o) { return PyBytes_FromStringAndSize(o->buf ? o->buf : "", o->len); }

/* (offsets, data, validity or None when nothing is null) */
static PyObject *var_tuple(Var *v) {
    PyObject *valid = v->nulls ? out_bytes(&v->valid) : Py_NewRef(Py_None);
    PyObject *t = valid ? Py_BuildValue("(NNN)", out_bytes(&v->offsets), out_bytes(&v->data), valid) : NULL;
    return t;
}

static PyObject *buffers(PyObject *self, PyObject *args) {
    PyObject *recs, *hdrs, *data, *dbase, *bo, *bt, *mt;
    Py_ssize_t n;
    int log_append, skip = 0;
    long long kbase = 0, vbase = 0, hkbase = 0, hvbase = 0, hbase = 0;
    if (!PyArg_ParseTuple(args, "OOnOOOOOi|i(LLLLL)", &recs, &hdrs, &n, &data, &dbase, &bo, &bt, &mt, &log_append,
                          &skip, &kbase, &vbase, &hkbase, &hvbase, &hbase)) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    Proj j;
    if (proj_open(&j, recs, hdrs, n, data, dbase, bo, bt, mt, log_append)) Py_RETURN_NOTIMPLEMENTED;
    const unsigned char *d = j.d;
    int64_t nh = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t off, ts, pos;
        const int64_t *r = j.r + i * R;
        if (absolute(&j, r, &off, &ts, &pos)) { proj_close(&j); Py_RETURN_NOTIMPLEMENTED; }
        nh += r[HC];
        if (!(skip & 4)) { /* header keys are Arrow strings: valid UTF-8 or the lists' path (backslashreplace) */
            const int64_t *hh = j.h + r[H_FIRST] * H;
            for (int64_t k = 0; k < r[HC]; k++)
                if (!utf8_valid(d + hh[k * H + P_HKEY], (Py_ssize_t)hh[k * H + HKLEN])) {
                    proj_close(&j);
                    Py_RETURN_NOTIMPLEMENTED;
                }
        }
    }
    Out ints[4] = {{0}}; /* position, length, offset, timestamp: int64 each */
    Var key = {{0}}, value = {{0}}, hkey = {{0}}, hval = {{0}};
    Out hlist = {0};
    int rc = 0;
    for (int c = 0; c < 4; c++) if (grow(&ints[c], 8 * n + 8) < 0) rc = -1;
    if (rc == 0 && grow(&hlist, 4 * (n + 1)) < 0) rc = -1;
    if (rc == 0) rc = var_init(&key, n, kbase);
    if (rc == 0) rc = var_init(&value, n, vbase);
    if (rc == 0) rc = var_init(&hkey, (Py_ssize_t)nh, hkbase);
    if (rc == 0) rc = var_init(&hval, (Py_ssize_t)nh, hvbase);
    if (rc == 0 && (hbase < 0 || hbase + nh > INT32_MAX)) rc = 1;
    int64_t size = 0;
    int32_t hend = (int32_t)hbase;
    if (rc == 0) put(&hlist, (const char *)&hend, 4);
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        const int64_t *r = j.r + i * R;
        int64_t v[4];
        absolute(&j, r, &v[2], &v[3], &v[0]);
        v[1] = r[END] - r[START];
        for (int c = 0; c < 4; c++) put(&ints[c], (const char *)&v[c], 8);
        if (!(skip & 1)) { if ((rc = var_add(&key, d + r[P_KEY], r[KLEN])) != 0) break; size += r[KLEN] > 0 ? r[KLEN] : 0; }
        if (!(skip & 2)) { if ((rc = var_add(&value, d + r[P_VAL], r[VLEN])) != 0) break; size += r[VLEN] > 0 ? r[VLEN] : 0; }
        if (!(skip & 4)) {
            const int64_t *hh = j.h + r[H_FIRST] * H;
            for (int64_t k = 0; k < r[HC] && rc == 0; k++) {
                const int64_t *x = hh + k * H;
                if ((rc = var_add(&hkey, d + x[P_HKEY], x[HKLEN])) == 0) rc = var_add(&hval, d + x[P_HVAL], x[HVLEN]);
            }
            hend += (int32_t)r[HC];
            put(&hlist, (const char *)&hend, 4);
        }
    }
    proj_close(&j);
    PyObject *res = NULL;
    if (rc == 0) {
        PyObject *none3 = Py_BuildValue("(OOO)", Py_None, Py_None, Py_None);
        PyObject *hk = skip & 4 ? Py_NewRef(none3) : var_tuple(&hkey);
        PyObject *hv = skip & 4 ? Py_NewRef(none3) : var_tuple(&hval);
        res = Py_BuildValue("(nNNNNNNNNNL)", n, j.has_base ? out_bytes(&ints[0]) : Py_NewRef(Py_None),
                            out_bytes(&ints[1]), out_bytes(&ints[2]), out_bytes(&ints[3]),
                            skip & 1 ? Py_NewRef(none3) : var_tuple(&key),
                            skip & 2 ? Py_NewRef(none3) : var_tuple(&value),
                            skip & 4 ? Py_NewRef(Py_None) : out_bytes(&hlist), hk, hv, (long long)size);
        Py_XDECREF(none3);
    } else if (rc == 1) res = Py_NewRef(Py_NotImplemented);
    for (int c = 0; c < 4; c++) PyMem_Free(ints[c].buf);
    var_free(&key); var_free(&value); var_free(&hkey); var_free(&hval);
    PyMem_Free(hlist.buf);
    return res;
}

static PyMethodDef methods[] = {
    {"read", read_records, METH_VARARGS,
     "read(data, p, stop, count, max_records) -> (recs, hdrs, n, end, capped, bad) | NotImplemented"},
    {"to_json", to_json, METH_VARARGS,
     "to_json(recs, hdrs, n, data, dbase, base_offset, base_ts, max_ts, log_append, mode, strict) -> bytes | None | NotImplemented"},
    {"split", split, METH_VARARGS,
     "split(recs, hdrs, n, data, dbase, base_offset, base_ts, max_ts, log_append) -> tuple | NotImplemented"},
    {"buffers", buffers, METH_VARARGS,
     "buffers(recs, hdrs, n, data, dbase, base_offset, base_ts, max_ts, log_append[, skip[, bases]]) -> tuple | NotImplemented"},
    {"lines", lines, METH_VARARGS,
     "lines(recs, hdrs, n, data, dbase, base_offset, base_ts, max_ts, log_append, tail) -> bytes | NotImplemented"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_recordtable", NULL, -1, methods};

PyMODINIT_FUNC PyInit__recordtable(void) { return PyModule_Create(&module); }
