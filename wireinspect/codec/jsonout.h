/* The JSON text writer of the compiled twins (_legacy.c; the helpers _fastjson.c has its own copy of):
 * a growable buffer, integers as str() writes them, bytes as the --bytes modes base64 and hex write
 * them and the text mode as fastjson._text does (codec/bytesfmt.py), and the Python result of a twin from its return code. */
#ifndef WIREINSPECT_JSONOUT_H
#define WIREINSPECT_JSONOUT_H

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

/* (room for 20 characters already grown) */
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

/* Length of the well-formed UTF-8 sequence at s[0:n] (as Python's strict decoder takes it), 0 if none. */
static inline int utf8_len(const unsigned char *s, Py_ssize_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[2] & 0xC0) != 0x80) return 0;
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi ? 3 : 0;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi ? 4 : 0;
    }
    return 0;
}

/* A bytes value as the --bytes text mode writes it (fastjson._text): decoded as UTF-8 with
 * backslashreplace (a byte outside a well-formed sequence becomes the text \xNN), then as a JSON
 * string as json.dumps(ensure_ascii=False) and orjson write it (", \\, and control characters
 * escaped; everything else as is). */
static int put_text(Out *o, const unsigned char *s, Py_ssize_t n) {
    if (grow(o, 6 * n + 2) < 0) return -1;
    char *d = o->buf + o->len;
    *d++ = '"';
    for (Py_ssize_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') { *d++ = (char)c; i++; continue; }
        if (c < 0x20) {
            *d++ = '\\';
            if (c == '\n') *d++ = 'n';
            else if (c == '\r') *d++ = 'r';
            else if (c == '\t') *d++ = 't';
            else if (c == '\b') *d++ = 'b';
            else if (c == '\f') *d++ = 'f';
            else { *d++ = 'u'; *d++ = '0'; *d++ = '0'; *d++ = HEX[c >> 4]; *d++ = HEX[c & 15]; }
            i++;
            continue;
        }
        if (c == '"' || c == '\\') { *d++ = '\\'; *d++ = (char)c; i++; continue; }
        int k = utf8_len(s + i, n - i);
        if (k) { memcpy(d, s + i, k); d += k; i += k; continue; }
        *d++ = '\\'; *d++ = '\\'; *d++ = 'x'; *d++ = HEX[c >> 4]; *d++ = HEX[c & 15]; /* 5 <= 6 per byte */
        i++;
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

#endif
