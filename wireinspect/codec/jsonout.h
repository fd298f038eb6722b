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

static inline int grow(Out *o, Py_ssize_t need) {
    if (o->len + need <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + need) cap *= 2;
    char *b = PyMem_Realloc(o->buf, cap);
    if (!b) { PyErr_NoMemory(); return -1; }
    o->buf = b;
    o->cap = cap;
    return 0;
}

/* A little-endian 32-bit word as the machine holds it (a no-op on x86 and little-endian ARM). */
static inline uint32_t le32(uint32_t w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap32(w);
#else
    return w;
#endif
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
static inline int put_bytes(Out *o, const unsigned char *s, Py_ssize_t n, int hex) {
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

/* What a byte starts, for put_text: 0 itself (printable ASCII but '"' and '\\'), 1 a JSON escape, 2-4 a
 * UTF-8 sequence of that many bytes (to check), 5 nothing (a continuation byte, C0, C1, F5-FF). */
static const unsigned char TEXT_CLASS[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5
};

/* What put_text writes for a byte that is not the start of a well-formed UTF-8 sequence: itself
 * (printable ASCII), JSON's escape ('"', '\\', control characters), or \\xNN (backslashreplace's
 * \xNN with its backslash escaped); padded to 8 bytes, so that one 8-byte copy writes any of them. */
static const char TEXT_OUT[256][8] = {
    "\134\165\060\060\060\060", "\134\165\060\060\060\061", "\134\165\060\060\060\062", "\134\165\060\060\060\063", "\134\165\060\060\060\064", "\134\165\060\060\060\065", "\134\165\060\060\060\066", "\134\165\060\060\060\067",
    "\134\142", "\134\164", "\134\156", "\134\165\060\060\060\142", "\134\146", "\134\162", "\134\165\060\060\060\145", "\134\165\060\060\060\146",
    "\134\165\060\060\061\060", "\134\165\060\060\061\061", "\134\165\060\060\061\062", "\134\165\060\060\061\063", "\134\165\060\060\061\064", "\134\165\060\060\061\065", "\134\165\060\060\061\066", "\134\165\060\060\061\067",
    "\134\165\060\060\061\070", "\134\165\060\060\061\071", "\134\165\060\060\061\141", "\134\165\060\060\061\142", "\134\165\060\060\061\143", "\134\165\060\060\061\144", "\134\165\060\060\061\145", "\134\165\060\060\061\146",
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
    "\170", "\171", "\172", "\173", "\174", "\175", "\176", "\177",
    "\134\134\170\070\060", "\134\134\170\070\061", "\134\134\170\070\062", "\134\134\170\070\063", "\134\134\170\070\064", "\134\134\170\070\065", "\134\134\170\070\066", "\134\134\170\070\067",
    "\134\134\170\070\070", "\134\134\170\070\071", "\134\134\170\070\141", "\134\134\170\070\142", "\134\134\170\070\143", "\134\134\170\070\144", "\134\134\170\070\145", "\134\134\170\070\146",
    "\134\134\170\071\060", "\134\134\170\071\061", "\134\134\170\071\062", "\134\134\170\071\063", "\134\134\170\071\064", "\134\134\170\071\065", "\134\134\170\071\066", "\134\134\170\071\067",
    "\134\134\170\071\070", "\134\134\170\071\071", "\134\134\170\071\141", "\134\134\170\071\142", "\134\134\170\071\143", "\134\134\170\071\144", "\134\134\170\071\145", "\134\134\170\071\146",
    "\134\134\170\141\060", "\134\134\170\141\061", "\134\134\170\141\062", "\134\134\170\141\063", "\134\134\170\141\064", "\134\134\170\141\065", "\134\134\170\141\066", "\134\134\170\141\067",
    "\134\134\170\141\070", "\134\134\170\141\071", "\134\134\170\141\141", "\134\134\170\141\142", "\134\134\170\141\143", "\134\134\170\141\144", "\134\134\170\141\145", "\134\134\170\141\146",
    "\134\134\170\142\060", "\134\134\170\142\061", "\134\134\170\142\062", "\134\134\170\142\063", "\134\134\170\142\064", "\134\134\170\142\065", "\134\134\170\142\066", "\134\134\170\142\067",
    "\134\134\170\142\070", "\134\134\170\142\071", "\134\134\170\142\141", "\134\134\170\142\142", "\134\134\170\142\143", "\134\134\170\142\144", "\134\134\170\142\145", "\134\134\170\142\146",
    "\134\134\170\143\060", "\134\134\170\143\061", "\134\134\170\143\062", "\134\134\170\143\063", "\134\134\170\143\064", "\134\134\170\143\065", "\134\134\170\143\066", "\134\134\170\143\067",
    "\134\134\170\143\070", "\134\134\170\143\071", "\134\134\170\143\141", "\134\134\170\143\142", "\134\134\170\143\143", "\134\134\170\143\144", "\134\134\170\143\145", "\134\134\170\143\146",
    "\134\134\170\144\060", "\134\134\170\144\061", "\134\134\170\144\062", "\134\134\170\144\063", "\134\134\170\144\064", "\134\134\170\144\065", "\134\134\170\144\066", "\134\134\170\144\067",
    "\134\134\170\144\070", "\134\134\170\144\071", "\134\134\170\144\141", "\134\134\170\144\142", "\134\134\170\144\143", "\134\134\170\144\144", "\134\134\170\144\145", "\134\134\170\144\146",
    "\134\134\170\145\060", "\134\134\170\145\061", "\134\134\170\145\062", "\134\134\170\145\063", "\134\134\170\145\064", "\134\134\170\145\065", "\134\134\170\145\066", "\134\134\170\145\067",
    "\134\134\170\145\070", "\134\134\170\145\071", "\134\134\170\145\141", "\134\134\170\145\142", "\134\134\170\145\143", "\134\134\170\145\144", "\134\134\170\145\145", "\134\134\170\145\146",
    "\134\134\170\146\060", "\134\134\170\146\061", "\134\134\170\146\062", "\134\134\170\146\063", "\134\134\170\146\064", "\134\134\170\146\065", "\134\134\170\146\066", "\134\134\170\146\067",
    "\134\134\170\146\070", "\134\134\170\146\071", "\134\134\170\146\141", "\134\134\170\146\142", "\134\134\170\146\143", "\134\134\170\146\144", "\134\134\170\146\145", "\134\134\170\146\146"
};
static const unsigned char TEXT_LEN[256] = {
    6, 6, 6, 6, 6, 6, 6, 6, 2, 2, 2, 6, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
    1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5
};

/* What must follow a byte for it to start a well-formed UTF-8 sequence (Unicode's table 3-7, the
 * strict decoder's rule), packed for put_escaped's four-byte check: bits 0-7 the lowest second byte,
 * bits 8-15 how many second-byte values are allowed from there (0: the byte starts no sequence),
 * bits 16-23 and 24-31 0xC0 when the third and fourth bytes must be continuation bytes. */
static const uint32_t UTF8_NEXT[256] = {
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080,
    0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080,
    0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080,
    0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080, 0x00004080,
    0x00c020a0, 0x00c04080, 0x00c04080, 0x00c04080, 0x00c04080, 0x00c04080, 0x00c04080, 0x00c04080,
    0x00c04080, 0x00c04080, 0x00c04080, 0x00c04080, 0x00c04080, 0x00c02080, 0x00c04080, 0x00c04080,
    0xc0c03090, 0xc0c04080, 0xc0c04080, 0xc0c04080, 0xc0c01080, 0x00000000, 0x00000000, 0x00000000,
    0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000
};

/* Whether s[0..k) (k = 2..4, s[0] of that class, k bytes there) is a well-formed UTF-8 sequence (no
 * overlongs, no surrogates, nothing past U+10FFFF: the strict decoder's rule). */
static inline int utf8_ok(const unsigned char *s, int k) {
    unsigned char c = s[0];
    if ((s[1] & 0xC0) != 0x80) return 0;
    if (k == 2) return 1;
    if (c == 0xE0 && s[1] < 0xA0) return 0;
    if (c == 0xED && s[1] > 0x9F) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;
    if (c == 0xF4 && s[1] > 0x8F) return 0;
    if ((s[2] & 0xC0) != 0x80) return 0;
    return k == 3 || (s[3] & 0xC0) == 0x80;
}

/* A well-formed UTF-8 sequence s[0..k) written at d: copied, except, with `controls`, the code points
 * never printed raw (C1, U+061C, U+200E/F, U+2028/9, U+202A-E, U+2066-9: codec/text.py's BIDI) as
 * \xNN or \uNNNN. Returns where the writing stopped. */
static inline char *put_sequence(char *d, const unsigned char *s, unsigned k, int controls) {
    if (controls && k <= 3) {
        unsigned c = s[0];
        uint32_t cp = k == 2 ? (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F)
                             : (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        if (cp <= 0x9F) { /* C1 */
            *d++ = '\\'; *d++ = 'x'; *d++ = HEX[cp >> 4]; *d++ = HEX[cp & 15];
            return d;
        }
        if (cp == 0x061C || cp == 0x200E || cp == 0x200F || cp == 0x2028 || cp == 0x2029 ||
            (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
            *d++ = '\\'; *d++ = 'u';
            *d++ = HEX[cp >> 12]; *d++ = HEX[(cp >> 8) & 15]; *d++ = HEX[(cp >> 4) & 15]; *d++ = HEX[cp & 15];
            return d;
        }
    }
    memcpy(d, s, k);
    return d + k;
}

/* Bytes as a JSON string of their text: UTF-8, each byte of an undecodable sequence as the four
 * characters \xNN (backslashreplace, whose backslash JSON escapes), JSON's escapes for '"', '\' and
 * the control characters (as orjson and json.dumps(ensure_ascii=False) write them). 0 ok, -1 error.
 * (The maximal subpart of an ill-formed sequence is replaced byte by byte; the next byte is read
 * afresh: a continuation byte never starts a sequence, so this is the decoder's replacement.) */
/* The one escaping loop of the text writers: each byte that starts no well-formed UTF-8 sequence as
 * out[byte] (len[byte] characters of an 8-byte entry), well-formed sequences copied, except, with
 * `controls`, the code points never printed raw (C1, U+061C, U+200E/F, U+2028/9, U+202A-E, U+2066-9:
 * codec/text.py's BIDI) as \xNN or \uNNNN. Room for 6 characters a byte plus 8 is reserved here.
 * Inlined with constant tables and `controls`: one specialised loop per writer. 0 ok, -1 error. */
static inline int put_escaped(Out *o, const unsigned char *s, Py_ssize_t n, const char (*out)[8],
                              const unsigned char *len, int controls) {
    if (grow(o, 6 * n + 8) < 0) return -1;
    char *d = o->buf + o->len;
    Py_ssize_t i = 0;
    /* Four bytes readable: whether a well-formed sequence starts here is worked out from one load and
     * one table entry without a branch (on random bytes the branches on each byte's class mispredict),
     * then one branch that is rarely taken on bytes that are not text and predictable on text. */
    while (i + 4 <= n) {
        uint32_t w, t = UTF8_NEXT[s[i]], m = t & 0xC0C00000u;
        memcpy(&w, s + i, 4);
        w = le32(w);
        unsigned c = s[i];
        unsigned ok = ((((w >> 8) - t) & 0xFF) < ((t >> 8) & 0xFF)) & ((w & m) == (m & 0x80800000u));
        if (__builtin_expect(ok, 0)) {
            unsigned k = TEXT_CLASS[c];
            d = put_sequence(d, s + i, k, controls);
            i += k;
            continue;
        }
        memcpy(d, out[c], 8);
        d += len[c];
        i++;
    }
    while (i < n) {  /* the last bytes, where a sequence may be cut short */
        unsigned char c = s[i];
        unsigned char k = TEXT_CLASS[c];
        if (k - 2u <= 2u && n - i >= k && utf8_ok(s + i, k)) {
            d = put_sequence(d, s + i, k, controls);
            i += k;
            continue;
        }
        memcpy(d, out[c], 8);
        d += len[c];
        i++;
    }
    o->len = d - o->buf;
    return 0;
}

static inline int put_text(Out *o, const unsigned char *s, Py_ssize_t n) {
    if (grow(o, 2) < 0) return -1;
    o->buf[o->len++] = '"';
    if (put_escaped(o, s, n, TEXT_OUT, TEXT_LEN, 0) < 0 || grow(o, 1) < 0) return -1;
    o->buf[o->len++] = '"';
    return 0;
}

#endif
