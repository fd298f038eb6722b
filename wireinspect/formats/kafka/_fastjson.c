/* The compiled twin of fastjson.fast_records_json (formats/kafka/fastjson.py): the records of a plain
 * valid magic-2 batch as JSON text, in the --bytes modes base64 and hex.
 *
 * Optional: `pip install .` builds it when a C compiler is there; without it the pure-Python function
 * does the same work. It returns exactly what the Python function returns (None at the first
 * irregularity, for the full decoder to take over), or NotImplemented for what it leaves to Python
 * (an arithmetic result beyond 64 bits); tests/formats/kafka/test_fastjson.py checks both against the
 * full decoder on generated and damaged batches. Header keys that are not ASCII are turned into JSON
 * by the Python function it is given (UTF-8 with backslashreplace, as the full decoder does).
 *
 * (The legacy magic 0/1 twin is in _legacy.c.)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int grow(Out *o, Py_ssize_t need) {
    if (o->len + need <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + need) cap *= 2;
    char *b = PyMem_Realloc(o->buf, cap);
    if (!b) { PyErr_NoMemory(); return -1; }
    o->buf = b;
    o->cap = cap;
    return 0;
}

static inline void put(Out *o, const char *s, Py_ssize_t n) { memcpy(o->buf + o->len, s, n); o->len += n; }

static inline void put_int(Out *o, int64_t v) {
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) tmp[n++] = '-';
    while (n) o->buf[o->len++] = tmp[--n];
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char HEX[] = "0123456789abcdef";

/* A bytes value as a JSON string ('"' + base64 or hex + '"'). */
static int put_bytes(Out *o, const unsigned char *s, Py_ssize_t n, int hex) {
    if (grow(o, (hex ? 2 * n : 4 * ((n + 2) / 3)) + 2) < 0) return -1;
    char *d = o->buf + o->len;
    *d++ = '"';
    if (hex) {
        for (Py_ssize_t i = 0; i < n; i++) { *d++ = HEX[s[i] >> 4]; *d++ = HEX[s[i] & 15]; }
    } else {
        Py_ssize_t i = 0;
        for (; i + 3 <= n; i += 3) {
            uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
            *d++ = B64[v >> 18]; *d++ = B64[(v >> 12) & 63]; *d++ = B64[(v >> 6) & 63]; *d++ = B64[v & 63];
        }
        if (n - i == 1) {
            uint32_t v = (uint32_t)s[i] << 16;
            *d++ = B64[v >> 18]; *d++ = B64[(v >> 12) & 63]; *d++ = '='; *d++ = '=';
        } else if (n - i == 2) {
            uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
            *d++ = B64[v >> 18]; *d++ = B64[(v >> 12) & 63]; *d++ = B64[(v >> 6) & 63]; *d++ = '=';
        }
    }
    *d++ = '"';
    o->len = d - o->buf;
    return 0;
}

/* A header key as a JSON string: ASCII here (json.dumps' escapes), anything else through `text`. */
static int put_key(Out *o, const unsigned char *s, Py_ssize_t n, PyObject *text) {
    Py_ssize_t i;
    for (i = 0; i < n; i++) if (s[i] >= 0x80) break;
    if (i < n) {
        PyObject *b = PyBytes_FromStringAndSize((const char *)s, n);
        if (!b) return -1;
        PyObject *r = PyObject_CallOneArg(text, b);
        Py_DECREF(b);
        if (!r) return -1;
        Py_ssize_t len;
        const char *u = PyUnicode_AsUTF8AndSize(r, &len);
        if (!u || grow(o, len) < 0) { Py_DECREF(r); return -1; }
        put(o, u, len);
        Py_DECREF(r);
        return 0;
    }
    if (grow(o, 6 * n + 2) < 0) return -1;
    char *d = o->buf + o->len;
    *d++ = '"';
    for (i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') { *d++ = '\\'; *d++ = (char)c; }
        else if (c >= 0x20) *d++ = (char)c;
        else if (c == '\n') { *d++ = '\\'; *d++ = 'n'; }
        else if (c == '\r') { *d++ = '\\'; *d++ = 'r'; }
        else if (c == '\t') { *d++ = '\\'; *d++ = 't'; }
        else if (c == '\b') { *d++ = '\\'; *d++ = 'b'; }
        else if (c == '\f') { *d++ = '\\'; *d++ = 'f'; }
        else { *d++ = '\\'; *d++ = 'u'; *d++ = '0'; *d++ = '0'; *d++ = HEX[c >> 4]; *d++ = HEX[c & 15]; }
    }
    *d++ = '"';
    o->len = d - o->buf;
    return 0;
}

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

#include "../../codec/varint.h"

#define VARINT(var, most) do { int r_ = varint(d, &p, end, most, &var); if (r_) { rc = r_; goto done; } } while (0)

/* Could these bytes (n >= 5) get a Schema Registry label with no registry at hand? The same test as
 * fastjson.may_be_framed: 0x00 and a schema id below 2^24; 0x01 or Glue's 0x03 and a version-4 UUID. */
static int may_be_framed(const unsigned char *b, int64_t n) {
    if (b[0] == 0x00) return b[1] == 0;
    if (b[0] == 0x01) return n >= 17 && (b[7] & 0xF0) == 0x40 && (b[9] & 0xC0) == 0x80;
    if (b[0] == 0x03) return n >= 18 && (b[1] == 0x00 || b[1] == 0x05) && (b[8] & 0xF0) == 0x40 && (b[10] & 0xC0) == 0x80;
    return 0;
}

static PyObject *records_json(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t p, stop;
    PyObject *dbase_obj, *text;
    long long base_offset, base_ts, max_ts, count;
    int log_append, hex, first;
    long long last_delta;
    if (!PyArg_ParseTuple(args, "y*nnOLLiLLLipO", &view, &p, &stop, &dbase_obj, &base_offset, &base_ts,
                          &log_append, &max_ts, &last_delta, &count, &hex, &first, &text))
        return NULL;
    const unsigned char *d = view.buf;
    Py_ssize_t size = view.len;
    int has_base = dbase_obj != Py_None;
    long long dbase = 0;
    if (has_base) {
        dbase = PyLong_AsLongLong(dbase_obj);
        if (dbase == -1 && PyErr_Occurred()) { PyBuffer_Release(&view); return NULL; }
    }
    Out o = {NULL, 0, 0};
    int rc = 0; /* 0 ok, 1 None, 2 NotImplemented, -1 error */
    int64_t od = 0;
    long long n_out = 0;
    if (p < 0 || stop > size || p > stop) { rc = 1; goto done; }
    for (long long k = 0; k < count; k++) {
        Py_ssize_t start = p, end = stop;
        int64_t ln, tsd, hc;
        VARINT(ln, 5);
        if (ln <= 0 || ln > stop - p) { rc = 1; goto done; }
        end = p + ln;
        p += 1; /* attributes */
        VARINT(tsd, 10);
        VARINT(od, 5);
        int64_t off, ts, pos = 0;
        if (__builtin_add_overflow((int64_t)base_offset, od, &off)) { rc = 2; goto done; }
        if (log_append) ts = max_ts;
        else if (__builtin_add_overflow((int64_t)base_ts, tsd, &ts)) { rc = 2; goto done; }
        if (has_base && __builtin_add_overflow((int64_t)dbase, (int64_t)start, &pos)) { rc = 2; goto done; }
        if (grow(&o, 160) < 0) { rc = -1; goto done; }
        if (n_out++) put(&o, ",", 1);
        put(&o, "{\"position\":", 12);
        if (has_base) put_int(&o, pos); else put(&o, "null", 4);
        put(&o, ",\"length\":", 10);
        put_int(&o, (int64_t)(end - start));
        put(&o, ",\"offset\":", 10);
        put_int(&o, off);
        put(&o, ",\"timestamp\":", 13);
        put_int(&o, ts);
        put(&o, ",\"key\":", 7);
        for (int which = 0; which < 2; which++) { /* key, then value */
            int64_t l;
            VARINT(l, 5);
            if (l > 0) {
                if (l > end - p) { rc = 1; goto done; }
                /* maybe registry-framed (may_be_framed in fastjson.py): the full path labels it */
                if (l >= 5 && may_be_framed(d + p, l)) { rc = 1; goto done; }
                if (put_bytes(&o, d + p, (Py_ssize_t)l, hex) < 0) { rc = -1; goto done; }
                p += l;
            } else if (l == -1 || l == 0) {
                if (grow(&o, 4) < 0) { rc = -1; goto done; }
                if (l) put(&o, "null", 4); else put(&o, "\"\"", 2);
            } else { rc = 1; goto done; }
            if (which == 0) {
                if (grow(&o, 9) < 0) { rc = -1; goto done; }
                put(&o, ",\"value\":", 9);
            }
        }
        if (grow(&o, 12) < 0) { rc = -1; goto done; }
        put(&o, ",\"headers\":[", 12);
        VARINT(hc, 5);
        if (hc < 0) { rc = 1; goto done; }
        for (int64_t j = 0; j < hc; j++) {
            int64_t hkl, hvl;
            VARINT(hkl, 5);
            if (hkl < 0 || hkl > end - p) { rc = 1; goto done; }
            /* __key_schema_id / __value_schema_id: the full path labels the record */
            if ((hkl == 15 || hkl == 17) && d[p] == '_' && d[p + 1] == '_') { rc = 1; goto done; }
            if (grow(&o, 2) < 0) { rc = -1; goto done; }
            if (j) put(&o, ",", 1);
            put(&o, "[", 1);
            if (put_key(&o, d + p, (Py_ssize_t)hkl, text) < 0) { rc = -1; goto done; }
            p += hkl;
            VARINT(hvl, 5);
            if (grow(&o, 6) < 0) { rc = -1; goto done; }
            put(&o, ",", 1);
            if (hvl >= 0) {
                if (hvl > end - p) { rc = 1; goto done; }
                if (put_bytes(&o, d + p, (Py_ssize_t)hvl, hex) < 0) { rc = -1; goto done; }
                p += hvl;
            } else if (hvl == -1) put(&o, "null", 4);
            else { rc = 1; goto done; }
            if (grow(&o, 1) < 0) { rc = -1; goto done; }
            put(&o, "]", 1);
        }
        if (p != end) { rc = 1; goto done; }
        if (grow(&o, 2) < 0) { rc = -1; goto done; }
        put(&o, "]}", 2);
    }
    if ((p != stop && !first) || (n_out && od > last_delta)) rc = 1;
done:
    PyBuffer_Release(&view);
    return finish(rc, &o);
}

static PyMethodDef methods[] = {
    {"records_json", records_json, METH_VARARGS,
     "records_json(data, p, stop, dbase, base_offset, base_ts, log_append, max_ts, last_offset_delta, count, "
     "hex, first, text) -> str | None | NotImplemented"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastjson", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastjson(void) { return PyModule_Create(&module); }
