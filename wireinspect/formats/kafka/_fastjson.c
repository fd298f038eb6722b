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
 * legacy_records_json is the same for legacy (magic 0/1) wrappers: the compiled twin of
 * legacy.wrapper_records_json, checked against it by tests/formats/kafka/test_legacy_fastjson.py.
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

/* Big-endian reads (the caller has checked the bounds). */
static inline int64_t be64(const unsigned char *b) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | b[i];
    return (int64_t)v;
}

static inline uint32_t be32(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* The compiled twin of legacy.wrapper_records_json: the inner messages of a clean legacy (magic 0/1)
 * wrapper, `data` its decompressed message set, as JSON text; None where the Python function returns
 * None (the same checks, in the same order: framing, magic, codec, size minimum, CRC-32, key and value
 * lengths filling the message, at most max_records, at least one); NotImplemented for what it leaves to
 * Python (an offset beyond 64 bits, a magic that is not 0 or 1, arguments of other types). The CRC-32
 * is `crc32` (the Python function the pure path calls: zlib's), given a memoryview of magic..end;
 * a LogAppendTime timestamp is written as str() writes it. */
static PyObject *legacy_records_json(PyObject *self, PyObject *args) {
    Py_buffer view;
    int hex;
    PyObject *magic_obj, *offset_obj, *lat_obj, *max_obj, *crc32;
    if (!PyArg_ParseTuple(args, "y*OOOOpO", &view, &magic_obj, &offset_obj, &lat_obj, &max_obj, &hex, &crc32))
        return NULL;
    const unsigned char *d = view.buf;
    Py_ssize_t stop = view.len;
    Out o = {NULL, 0, 0};
    PyObject *ts_str = NULL;
    const char *ts_text = NULL;
    Py_ssize_t ts_len = 0;
    int rc = 0; /* 0 ok, 1 None, 2 NotImplemented, -1 error */
    int overflow;
    long long offset, max_records;
    if (!PyLong_Check(magic_obj) || !PyLong_Check(offset_obj) || !PyLong_Check(max_obj)) { rc = 2; goto done; }
    long magic = PyLong_AsLongAndOverflow(magic_obj, &overflow);
    if (overflow || (magic != 0 && magic != 1)) { rc = 2; goto done; } /* (-1 with an error: not 0 or 1) */
    PyErr_Clear();
    offset = PyLong_AsLongLongAndOverflow(offset_obj, &overflow);
    if (overflow) { rc = 2; goto done; }
    if (offset == -1 && PyErr_Occurred()) { rc = -1; goto done; }
    max_records = PyLong_AsLongLongAndOverflow(max_obj, &overflow);
    if (overflow) max_records = overflow > 0 ? LLONG_MAX : LLONG_MIN; /* only compared with a count */
    else if (max_records == -1 && PyErr_Occurred()) { rc = -1; goto done; }
    int relative = magic == 1 && offset != 0;
    int64_t shift = 0, last = 0;
    if (relative) { /* inner offsets are relative to the last one's: find it first */
        Py_ssize_t p = 0;
        while (stop - p >= 12) {
            last = be64(d + p);
            int32_t size = (int32_t)be32(d + p + 8);
            p += 12 + (Py_ssize_t)(size > 0 ? size : 0); /* (in Py_ssize_t: 12 + INT32_MAX overflows int) */
        }
        if (__builtin_sub_overflow((int64_t)offset, last, &shift)) { rc = 2; goto done; }
        if (shift < 0) { rc = 1; goto done; }
    }
    if (magic == 0) { ts_text = "null"; ts_len = 4; }
    else if (lat_obj != Py_None) {
        ts_str = PyObject_Str(lat_obj);
        if (!ts_str) { rc = -1; goto done; }
        ts_text = PyUnicode_AsUTF8AndSize(ts_str, &ts_len);
        if (!ts_text) { rc = -1; goto done; }
        if (!ts_len) ts_text = NULL; /* `ts or i64(...)`: an empty text reads the message's own */
    }
    const Py_ssize_t minimum = magic ? 22 : 14, key_at = magic ? 26 : 18;
    long long n = 0;
    int64_t ioff = 0;
    Py_ssize_t p = 0;
    while (p < stop) {
        if (n >= max_records || stop - p < 18) { rc = 1; goto done; }
        ioff = be64(d + p);
        int32_t isize = (int32_t)be32(d + p + 8);
        uint32_t icrc = be32(d + p + 12);
        int imagic = (signed char)d[p + 16], iattrs = (signed char)d[p + 17];
        if (imagic != magic || iattrs & 7 || isize < minimum || isize > stop - p - 12) { rc = 1; goto done; }
        Py_ssize_t q = p + 12 + isize;
        PyObject *mv = PyMemoryView_FromMemory((char *)(d + p + 16), q - p - 16, PyBUF_READ);
        if (!mv) { rc = -1; goto done; }
        PyObject *c = PyObject_CallOneArg(crc32, mv);
        Py_DECREF(mv);
        if (!c) { rc = -1; goto done; }
        if (!PyLong_Check(c)) { Py_DECREF(c); rc = 2; goto done; }
        long long cv = PyLong_AsLongLongAndOverflow(c, &overflow);
        Py_DECREF(c);
        if (cv == -1 && !overflow && PyErr_Occurred()) { rc = -1; goto done; }
        if (overflow || cv != (long long)icrc) { rc = 1; goto done; }
        /* keyLength at p + key_at, within the message (isize >= minimum) */
        Py_ssize_t k = p + key_at + 4, e;
        if (k > q) { rc = 1; goto done; }
        int32_t kl = (int32_t)be32(d + k - 4);
        if (kl >= 0) {
            if (kl > q - k - 4) { rc = 1; goto done; } /* no room for valueLength after the key */
            e = k + kl;
        } else if (kl == -1) e = k;
        else { rc = 1; goto done; }
        Py_ssize_t kstart = k, kend = e;
        k = e + 4;
        if (k > q) { rc = 1; goto done; }
        int32_t vl = (int32_t)be32(d + e);
        if (vl >= 0) {
            if (vl != q - k) { rc = 1; goto done; }
        } else if (vl == -1) {
            if (k != q) { rc = 1; goto done; }
        } else { rc = 1; goto done; }
        int64_t off;
        if (__builtin_add_overflow(shift, ioff, &off)) { rc = 2; goto done; }
        if (grow(&o, 120 + ts_len) < 0) { rc = -1; goto done; }
        if (n) put(&o, ",", 1);
        put(&o, "{\"position\":null,\"length\":", 26);
        put_int(&o, (int64_t)(q - p));
        put(&o, ",\"offset\":", 10);
        put_int(&o, off);
        put(&o, ",\"timestamp\":", 13);
        if (ts_text) put(&o, ts_text, ts_len); else put_int(&o, be64(d + p + 18));
        put(&o, ",\"key\":", 7);
        if (kl >= 0) { if (put_bytes(&o, d + kstart, kend - kstart, hex) < 0) { rc = -1; goto done; } }
        else put(&o, "null", 4);
        if (grow(&o, 9) < 0) { rc = -1; goto done; }
        put(&o, ",\"value\":", 9);
        if (vl >= 0) { if (put_bytes(&o, d + k, vl, hex) < 0) { rc = -1; goto done; } }
        else { if (grow(&o, 4) < 0) { rc = -1; goto done; } put(&o, "null", 4); }
        if (grow(&o, 15) < 0) { rc = -1; goto done; }
        put(&o, ",\"headers\":[]}", 14);
        n++;
        p = q;
    }
    if (!n || (relative && ioff != last)) rc = 1;
done:
    PyBuffer_Release(&view);
    Py_XDECREF(ts_str);
    return finish(rc, &o);
}

static PyMethodDef methods[] = {
    {"records_json", records_json, METH_VARARGS,
     "records_json(data, p, stop, dbase, base_offset, base_ts, log_append, max_ts, last_offset_delta, count, "
     "hex, first, text) -> str | None | NotImplemented"},
    {"legacy_records_json", legacy_records_json, METH_VARARGS,
     "legacy_records_json(data, magic, offset, log_append_time, max_records, hex, crc32) -> str | None | NotImplemented"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastjson", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastjson(void) { return PyModule_Create(&module); }
