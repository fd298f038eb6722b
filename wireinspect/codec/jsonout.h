/* JSON text written by the compiled twins (formats/kafka/_recordtable.c): a growable buffer, integers,
 * bytes as base64/hex strings and bytes as text strings, exactly as the Python twins write them
 * (binascii.b2a_base64, bytes.hex, and bytes.decode("utf-8", "backslashreplace") through orjson). */
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

/* (room for 20 characters checked by the caller) */
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

/* A bytes value as a JSON string ('"' + base64 or hex + '"'). 0 ok, -1 error. */
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

/* The length of the well-formed UTF-8 sequence at s[0..n) (1-4), or 0 when s[0] starts none: the
 * strict decoder's rule (no overlongs, no surrogates, nothing past U+10FFFF). */
static inline int utf8_len(const unsigned char *s, Py_ssize_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3) return 0;
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c < 0xF5) {
        if (n < 4) return 0;
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* Bytes as a JSON string of their text: UTF-8, each byte of an undecodable sequence as the four
 * characters \xNN (backslashreplace, whose backslash JSON escapes), JSON's escapes for '"', '\' and
 * the control characters (as orjson and json.dumps(ensure_ascii=False) write them). 0 ok, -1 error. */
static int put_text(Out *o, const unsigned char *s, Py_ssize_t n) {
    if (grow(o, 6 * n + 2) < 0) return -1; /* at most 6 characters a byte (\u00XX, \\xNN is 5) */
    char *d = o->buf + o->len;
    *d++ = '"';
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') { *d++ = (char)c; i++; continue; }
        if (c < 0x80) {
            *d++ = '\\';
            switch (c) {
            case '"': *d++ = '"'; break;
            case '\\': *d++ = '\\'; break;
            case '\n': *d++ = 'n'; break;
            case '\r': *d++ = 'r'; break;
            case '\t': *d++ = 't'; break;
            case '\b': *d++ = 'b'; break;
            case '\f': *d++ = 'f'; break;
            default: *d++ = 'u'; *d++ = '0'; *d++ = '0'; *d++ = HEX[c >> 4]; *d++ = HEX[c & 15];
            }
            i++;
            continue;
        }
        int k = utf8_len(s + i, n - i);
        if (k) { memcpy(d, s + i, k); d += k; i += k; continue; }
        /* the maximal subpart of an ill-formed sequence: each of its bytes as \xNN; the next byte is
         * read afresh (a continuation byte never starts a sequence, so one byte at a time is the same) */
        *d++ = '\\'; *d++ = '\\'; *d++ = 'x'; *d++ = HEX[c >> 4]; *d++ = HEX[c & 15];
        i++;
    }
    *d++ = '"';
    o->len = d - o->buf;
    return 0;
}

#endif
