/* The compiled twin of the one reader of Kafka's legacy (magic 0/1) messages, legacy.read_messages
 * (formats/kafka/legacy.py, which documents the table), and the JSON projection of a clean wrapper's
 * table (legacy.table_json, every --bytes mode). Field positions are those of the LEGACY
 * layout (offset 0, messageSize 8, crc 12, magic 16, attributes 17, then magic 1's timestamp 18;
 * keyLength 18 or 26); tests/formats/kafka/test_legacy_reader.py checks this reader against the Python
 * one, and both against kafka-python, and tests/formats/kafka/test_legacy_fastjson.py the JSON.
 *
 * Optional: `pip install .` builds it when a C compiler is there; without it (or with
 * WIREINSPECT_PURE=1) the pure-Python twins do the same work. The CRC-32 is the Python function the
 * pure path calls (zlib's), given a memoryview of magic..end.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../codec/jsonout.h"

/* The result of a twin from its return code: 0 the text in `o`, 1 None (irregular: the full path
 * speaks), 2 NotImplemented (the Python twin decides), -1 the error already set. Frees `o`. */
static PyObject *finish(int rc, Out *o) {
    PyObject *res;
    if (rc == 0) res = PyUnicode_DecodeUTF8(o->buf ? o->buf : "", o->len, "strict");
    else if (rc == 1) res = Py_NewRef(Py_None);
    else if (rc == 2) res = Py_NewRef(Py_NotImplemented);
    else res = NULL;
    PyMem_Free(o->buf);
    return res;
}

enum { START, OFFSET, SIZE, CRC, MAGIC, ATTRIBUTES, TIMESTAMP, KEY_LENGTH, KEY_AT, VALUE_LENGTH, VALUE_AT, STATUS,
       FAIL_AT, STRIDE };
enum { CRC_BAD = 1, FIELDS_BAD = 2, HEAD_CUT = 4, MAGIC_BAD = 8, SIZE_BAD = 16, CUT = 32 };
#define LOG_OVERHEAD 12
#define HEAD_SIZE 18

typedef struct {
    int64_t *v;
    Py_ssize_t len, cap; /* in int64 values */
} Rows;

static int64_t *row(Rows *r) {
    if (r->len + STRIDE > r->cap) {
        Py_ssize_t cap = r->cap ? 2 * r->cap : 64 * STRIDE;
        int64_t *v = PyMem_Realloc(r->v, cap * sizeof(int64_t));
        if (!v) { PyErr_NoMemory(); return NULL; }
        r->v = v;
        r->cap = cap;
    }
    int64_t *x = r->v + r->len;
    memset(x, 0, STRIDE * sizeof(int64_t));
    r->len += STRIDE;
    return x;
}

static inline int64_t be64(const unsigned char *b) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | b[i];
    return (int64_t)v;
}

static inline uint32_t be32(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Does crc32(d[a:b]) equal `stored`? 1 yes, 0 no, -1 error set. */
static int crc_ok(const unsigned char *d, Py_ssize_t a, Py_ssize_t b, uint32_t stored, PyObject *crc32) {
    PyObject *mv = PyMemoryView_FromMemory((char *)(d + a), b - a, PyBUF_READ);
    if (!mv) return -1;
    PyObject *c = PyObject_CallOneArg(crc32, mv);
    Py_DECREF(mv);
    if (!c) return -1;
    int overflow;
    long long cv = PyLong_AsLongLongAndOverflow(c, &overflow);
    Py_DECREF(c);
    if (cv == -1 && !overflow && PyErr_Occurred()) return -1;
    return !overflow && cv == (long long)stored;
}

/* The reader: the rows of d[pos:stop] appended to `r`, at most max_rows; *end where the next message
 * would start. 0 ok, -1 error set. Exactly legacy._read_messages. */
static int read_set(const unsigned char *d, Py_ssize_t pos, Py_ssize_t stop, long long max_rows, PyObject *crc32,
                    Rows *r, Py_ssize_t *end) {
    Py_ssize_t p = pos;
    long long n = 0;
    while (p < stop && n < max_rows) {
        n++;
        int64_t *x = row(r);
        if (!x) return -1;
        x[START] = p;
        if (stop - p < HEAD_SIZE) { x[STATUS] = HEAD_CUT; x[FAIL_AT] = p; break; }
        int64_t size = (int32_t)be32(d + p + 8);
        int magic = (signed char)d[p + 16];
        x[OFFSET] = be64(d + p);
        x[SIZE] = size;
        x[CRC] = be32(d + p + 12);
        x[MAGIC] = magic;
        x[ATTRIBUTES] = (signed char)d[p + 17];
        if (magic != 0 && magic != 1) { x[STATUS] = MAGIC_BAD; x[FAIL_AT] = p + 16; break; }
        if (size < (magic ? 22 : 14)) { x[STATUS] = SIZE_BAD; x[FAIL_AT] = p + 8; break; }
        if (size > stop - p - LOG_OVERHEAD) { x[STATUS] = CUT; x[FAIL_AT] = p + 8; break; }
        Py_ssize_t q = p + LOG_OVERHEAD + (Py_ssize_t)size;
        int64_t status = 0, fail = 0;
        int ok = crc_ok(d, p + 16, q, (uint32_t)x[CRC], crc32);
        if (ok < 0) return -1;
        if (!ok) { status = CRC_BAD; fail = p + 12; }
        if (magic) x[TIMESTAMP] = be64(d + p + 18);
        Py_ssize_t k = p + (magic ? 26 : 18); /* keyLength, within the message: size >= the minimum */
        int64_t kl = (int32_t)be32(d + k), vl = 0;
        Py_ssize_t v = k + 4 + (Py_ssize_t)(kl > 0 ? kl : 0), bad = 0;
        if (kl < -1 || v + 4 > q) bad = k;
        else {
            vl = (int32_t)be32(d + v);
            if (vl < -1 || v + 4 + (vl > 0 ? vl : 0) != q) bad = v;
        }
        if (bad) {
            status |= FIELDS_BAD;
            if (!fail) fail = bad;
        } else {
            x[KEY_LENGTH] = kl;
            x[KEY_AT] = k + 4;
            x[VALUE_LENGTH] = vl;
            x[VALUE_AT] = v + 4;
        }
        x[STATUS] = status;
        x[FAIL_AT] = fail;
        p = q;
        if (status) break;
    }
    *end = p;
    return 0;
}

/* read_messages(data, pos, stop, max_rows, crc32) -> (table bytes: int64 in native order, end) */
static PyObject *read_messages(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, stop, end = 0;
    long long max_rows;
    PyObject *crc32;
    if (!PyArg_ParseTuple(args, "y*nnLO", &view, &pos, &stop, &max_rows, &crc32)) return NULL;
    PyObject *res = NULL;
    Rows r = {NULL, 0, 0};
    if (pos < 0 || stop > view.len) {
        PyErr_SetString(PyExc_ValueError, "read_messages: pos..stop outside the buffer");
        goto done;
    }
    if (read_set(view.buf, pos, stop, max_rows, crc32, &r, &end) < 0) goto done;
    res = Py_BuildValue("(y#n)", r.v ? (const char *)r.v : "", r.len * (Py_ssize_t)sizeof(int64_t), end);
done:
    PyMem_Free(r.v);
    PyBuffer_Release(&view);
    return res;
}

static inline int put_value(Out *o, const unsigned char *s, Py_ssize_t n, int mode) {
    return mode == 2 ? put_text(o, s, n) : put_bytes(o, s, n, mode == 1);
}

/* records_json(data, table, shift, magic0, log_append_time, mode) -> str | None | NotImplemented:
 * legacy.table_json's projection of a clean inner set's table (read_messages of `data`, as
 * legacy.clean_inner took it): one JSON object per row, offsets shifted by `shift` (magic 1: the
 * wrapper's offset less the last inner offset), timestamps null (`magic0`), the LogAppendTime
 * `log_append_time` as str() writes it, or each message's own. None for a table that does not fit
 * `data`; NotImplemented for an offset beyond 64 bits (Python's twin writes it). `mode`: 0 base64, 1 hex,
 * 2 text (the --bytes modes). */
static PyObject *records_json(PyObject *self, PyObject *args) {
    Py_buffer view, tview;
    int mode, magic0;
    long long shift;
    PyObject *lat_obj;
    if (!PyArg_ParseTuple(args, "y*y*LpOi", &view, &tview, &shift, &magic0, &lat_obj, &mode)) return NULL;
    const unsigned char *d = view.buf;
    Py_ssize_t size = view.len;
    Out o = {NULL, 0, 0};
    PyObject *ts_str = NULL;
    const char *ts_text = NULL;
    Py_ssize_t ts_len = 0;
    int rc = 0; /* 0 ok, 1 None, 2 NotImplemented, -1 error */
    Py_ssize_t len = tview.len / (Py_ssize_t)sizeof(int64_t);
    int64_t *rows = PyMem_Malloc(tview.len ? tview.len : 1); /* (a copy: the table's buffer may be unaligned) */
    if (!rows) { PyErr_NoMemory(); rc = -1; goto done; }
    memcpy(rows, tview.buf, tview.len);
    if (!len || tview.len % (STRIDE * sizeof(int64_t))) { rc = 1; goto done; }
    if (magic0) { ts_text = "null"; ts_len = 4; }
    else if (lat_obj != Py_None) {
        ts_str = PyObject_Str(lat_obj);
        if (!ts_str) { rc = -1; goto done; }
        ts_text = PyUnicode_AsUTF8AndSize(ts_str, &ts_len);
        if (!ts_text) { rc = -1; goto done; }
        if (!ts_len) ts_text = NULL; /* `ts or t[TIMESTAMP]`: an empty text writes the message's own */
    }
    for (Py_ssize_t i = 0; i < len; i += STRIDE) {
        const int64_t *x = rows + i;
        int64_t off;
        if (x[KEY_AT] < 0 || x[KEY_AT] > size || x[KEY_LENGTH] > size - x[KEY_AT] || x[VALUE_AT] < 0
            || x[VALUE_AT] > size || x[VALUE_LENGTH] > size - x[VALUE_AT]) { rc = 1; goto done; }
        if (__builtin_add_overflow((int64_t)shift, x[OFFSET], &off)) { rc = 2; goto done; }
        if (grow(&o, 120 + ts_len) < 0) { rc = -1; goto done; }
        if (i) put(&o, ",", 1);
        put(&o, "{\"position\":null,\"length\":", 26);
        put_int(&o, LOG_OVERHEAD + x[SIZE]);
        put(&o, ",\"offset\":", 10);
        put_int(&o, off);
        put(&o, ",\"timestamp\":", 13);
        if (ts_text) put(&o, ts_text, ts_len); else put_int(&o, x[TIMESTAMP]);
        put(&o, ",\"key\":", 7);
        if (x[KEY_LENGTH] >= 0) { if (put_value(&o, d + x[KEY_AT], x[KEY_LENGTH], mode) < 0) { rc = -1; goto done; } }
        else put(&o, "null", 4);
        if (grow(&o, 9) < 0) { rc = -1; goto done; }
        put(&o, ",\"value\":", 9);
        if (x[VALUE_LENGTH] >= 0) {
            if (put_value(&o, d + x[VALUE_AT], x[VALUE_LENGTH], mode) < 0) { rc = -1; goto done; }
        } else { if (grow(&o, 4) < 0) { rc = -1; goto done; } put(&o, "null", 4); }
        if (grow(&o, 15) < 0) { rc = -1; goto done; }
        put(&o, ",\"headers\":[]}", 14);
    }
done:
    PyMem_Free(rows);
    PyBuffer_Release(&view);
    PyBuffer_Release(&tview);
    Py_XDECREF(ts_str);
    return finish(rc, &o);
}

static PyMethodDef methods[] = {
    {"read_messages", read_messages, METH_VARARGS,
     "read_messages(data, pos, stop, max_rows, crc32) -> (table bytes, end)"},
    {"records_json", records_json, METH_VARARGS,
     "records_json(data, table, shift, magic0, log_append_time, hex) -> str | None | NotImplemented"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_legacy", NULL, -1, methods};

PyMODINIT_FUNC PyInit__legacy(void) { return PyModule_Create(&module); }
