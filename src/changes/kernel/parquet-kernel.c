// The Parquet comparison's hot loop in C, built to WebAssembly by scripts/build-wasm.mjs (clang-14,
// freestanding wasm32, no C library): one column chunk's values fingerprinted and added into its rows'
// digests, as src/changes/scan-parquet.ts and src/io/parquet-reader.ts do in JavaScript (and, for the
// read-back and for `sfl stats`, a chunk's values as parquet-reader.ts readRows and readGroup give them).
// Why it exists: a comparison runs its decoder once, cold, and V8 spends most of a cold Parquet scan
// interpreting and compiling it (docs/performance.md, issue 32); WebAssembly is compiled on load and runs at
// speed from the first page (a side of 100,000 records: 60 ms against 300 ms).
//
// The rules are src/changes/row-digest.ts's, bit for bit: the caller (src/changes/kernel/parquet-kernel.ts)
// passes the column's seed, and test/changes/parquet-kernel.test.ts holds this kernel to the JavaScript
// decoder on every kind of column, page and encoding, and on damaged files. It is never more lenient: what
// it does not take whole (a value whose fingerprint needs JavaScript's number parser, a layout or damage it
// does not know) it gives back untouched, and the JavaScript decoder reads that column chunk, naming
// whatever is wrong as before.
//
// Formats: Parquet's parquet.thrift (PageHeader) and Encodings.md (PLAIN, RLE_DICTIONARY, the RLE /
// bit-packing hybrid), Snappy's format_description.txt, Thrift's compact protocol.

typedef unsigned char u8;
typedef unsigned int u32;
typedef int i32;
typedef long long i64;
typedef unsigned long long u64;

// the answers of sum_chunk
#define OK 0
#define REFUSED -1 // a layout, codec or damage left to the JavaScript decoder
#define SLOW -2    // a value whose fingerprint JavaScript makes (a number its fast path does not read)

extern u8 __heap_base;

/** Where the caller's buffers may start: past the kernel's own data and stack. */
__attribute__((export_name("heap_base"))) u32 heap_base(void) { return (u32)&__heap_base; }

// ---------------------------------------------------------------------------------------------------
// Fingerprints (src/changes/row-digest.ts)

#define PRIME_A 0x01000193u
#define PRIME_B 0x5bd1e995u

static u32 mix_a(u32 h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

static u32 mix_b(u32 h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  return h ^ (h >> 16);
}

static u32 seed_a, seed_b; // the column's name's seed
static u32 out_a, out_b;   // the last value's fingerprint
static int slow;           // a value met that JavaScript must fingerprint

/** hashBytes: FNV-1a in two lanes over the bytes, their count mixed in. */
static void hash_bytes(const u8 *p, u32 n) {
  u32 a = seed_a, b = seed_b;
  for (u32 i = 0; i < n; i++) {
    a = (a ^ p[i]) * PRIME_A;
    b = (b ^ p[i]) * PRIME_B;
  }
  out_a = mix_a(a ^ n);
  out_b = mix_b(b + n);
}

/** hashNumber: a finite double's 64 bits (-0 as 0). */
static void hash_number(double x) {
  if (x == 0) x = 0;
  u64 bits;
  __builtin_memcpy(&bits, &x, 8);
  u32 lo = (u32)bits, hi = (u32)(bits >> 32);
  out_a = mix_a(((seed_a ^ lo) * PRIME_A) ^ hi ^ 0x9e3779b9u);
  out_b = mix_b(((seed_b ^ hi) * PRIME_B) ^ lo ^ 0x7f4a7c15u);
}

static int digit(u8 c) { return c >= '0' && c <= '9'; }

/** JSON's number grammar (RFC 8259 section 6) over the whole of p[0, n): walk.ts numberEnd reaching n. */
static int json_number(const u8 *p, u32 n) {
  u32 i = 0;
  if (i < n && p[i] == '-') i++;
  if (i >= n) return 0;
  if (p[i] == '0') i++;
  else if (p[i] >= '1' && p[i] <= '9')
    while (i < n && digit(p[i])) i++;
  else return 0;
  if (i < n && p[i] == '.') {
    if (++i >= n || !digit(p[i])) return 0;
    while (i < n && digit(p[i])) i++;
  }
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    if (++i < n && (p[i] == '+' || p[i] == '-')) i++;
    if (i >= n || !digit(p[i])) return 0;
    while (i < n && digit(p[i])) i++;
  }
  return i == n;
}

// 10^0 to 10^22, each exact in a double (src/json/values.ts POW10)
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/**
 * hashTextBytes: a text in JSON's number grammar is the number it reads as, read by values.ts
 * numberValue's fast path (at most 15 significant digits, at most 22 after the point, no exponent: the
 * same double operations in the same order); any other number is SLOW (JavaScript's parser reads it).
 * Any other text is its bytes.
 */
static void hash_text(const u8 *p, u32 n) {
  if (n == 0 || !(p[0] == '-' || digit(p[0])) || !json_number(p, n)) {
    hash_bytes(p, n);
    return;
  }
  u32 i = 0;
  int neg = p[0] == '-';
  if (neg) i++;
  double mant = 0;
  int digits = 0, scale = -1;
  for (; i < n; i++) {
    u8 c = p[i];
    if (c == '.') {
      scale = 0;
      continue;
    }
    if (c == 'e' || c == 'E') {
      slow = 1;
      return;
    }
    mant = mant * 10 + (c - '0');
    if (mant != 0 || scale >= 0) digits++;
    if (scale >= 0) scale++;
  }
  if (digits > 15 || scale > 22) {
    slow = 1;
    return;
  }
  double v = scale > 0 ? mant / POW10[scale] : mant;
  hash_number(neg ? -v : v);
}

static u8 when[23]; // a date's or timestamp's text

/** `v` (at least 0) as `n` decimal digits, zeros first. */
static void digits(u8 *at, i64 v, int n) {
  for (int i = n - 1; i >= 0; i--, v /= 10) at[i] = '0' + v % 10;
}

/** A day count from 1970-01-01 as YYYY-MM-DD (H. Hinnant's civil_from_days); 0 for a year outside 0-9999. */
static int day_text(i64 days) {
  i64 z = days + 719468;
  i64 era = (z >= 0 ? z : z - 146096) / 146097;
  i64 doe = z - era * 146097;
  i64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  i64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  i64 mp = (5 * doy + 2) / 153;
  i64 d = doy - (153 * mp + 2) / 5 + 1;
  i64 m = mp < 10 ? mp + 3 : mp - 9;
  i64 y = yoe + era * 400 + (m <= 2);
  if (y < 0 || y > 9999) return 0;
  digits(when, y, 4);
  when[4] = '-';
  digits(when + 5, m, 2);
  when[7] = '-';
  digits(when + 8, d, 2);
  return 1;
}

/** A DATE as parquet-reader.ts cellOf gives it (YYYY-MM-DD), hashed as that text (not a number). */
static void hash_date(i32 days) {
  if (day_text(days)) hash_bytes(when, 10);
  else slow = 1;
}

static double ms_per_unit; // a TIMESTAMP column's milliseconds per unit

/** A TIMESTAMP as cellOf gives it: YYYY-MM-DDTHH:MM:SS, and .mmm when the milliseconds are not 0. */
static void hash_timestamp(double units) {
  double ms = __builtin_trunc(units * ms_per_unit);
  // JavaScript's Date holds +-8.64e15 ms; the years 0-9999 lie well inside
  if (!(ms > -1e15 && ms < 1e15)) {
    slow = 1;
    return;
  }
  i64 t = (i64)ms;
  i64 days = t >= 0 ? t / 86400000 : -((-t + 86400000 - 1) / 86400000);
  i64 rest = t - days * 86400000;
  if (!day_text(days)) {
    slow = 1;
    return;
  }
  when[10] = 'T';
  digits(when + 11, rest / 3600000, 2);
  when[13] = ':';
  digits(when + 14, rest / 60000 % 60, 2);
  when[16] = ':';
  digits(when + 17, rest / 1000 % 60, 2);
  u32 n = 19;
  if (rest % 1000) {
    when[19] = '.';
    digits(when + 20, rest % 1000, 3);
    n = 23;
  }
  hash_bytes(when, n);
}

// ---------------------------------------------------------------------------------------------------
// Snappy (format_description.txt): the decoder of parquet-reader.ts `unsnappy`, with its checks

/**
 * Eight bytes copied as one word. Snappy's short literals and copies (most of them) go so, two words for
 * up to 16 bytes, where the page has room past them: the bytes written beyond a copy are written again by
 * what follows (the output is made in order, and `o == size` at the end is checked). memcpy of a length
 * not known here compiles to memory.copy, whose call costs more than a short copy.
 */
static void copy8(u8 *to, const u8 *from) {
  u64 x;
  __builtin_memcpy(&x, from, 8);
  __builtin_memcpy(to, &x, 8);
}

/** Sixteen bytes as one SIMD word (v128.load, v128.store), as copy8 copies eight. */
typedef u8 v16 __attribute__((vector_size(16)));
static void copy16(u8 *to, const u8 *from) {
  v16 x;
  __builtin_memcpy(&x, from, 16);
  __builtin_memcpy(to, &x, 16);
}

/** `len` rounded up to a whole number of 16-byte words. */
static u32 words16(u32 len) { return (len + 15) & ~15u; }

static int unsnappy(const u8 *in, u32 n, u8 *out, u32 size) {
  u32 pos = 0, length = 0;
  for (u32 shift = 0;; shift += 7) {
    if (pos >= n || shift > 28) return REFUSED;
    u8 c = in[pos++];
    length |= (u32)(c & 0x7f) << shift;
    if (c < 0x80) break;
  }
  if (length != size) return REFUSED;
  u32 o = 0;
  while (pos < n) {
    u8 tag = in[pos++];
    u32 len, offset;
    if ((tag & 3) == 0) {
      len = (tag >> 2) + 1;
      if (len > 60) {
        u32 k = len - 60;
        if (pos + k > n) return REFUSED;
        len = 0;
        for (u32 j = 0; j < k; j++) len |= (u32)in[pos + j] << (8 * j);
        if (len == 0xffffffffu) return REFUSED;
        len += 1;
        pos += k;
      }
      if (len > n - pos || len > size - o) return REFUSED;
      // a literal by 16-byte words where both buffers have room past it (most are short)
      if (n - pos >= words16(len) && size - o >= words16(len))
        for (u32 j = 0; j < len; j += 16) copy16(out + o + j, in + pos + j);
      else
        __builtin_memcpy(out + o, in + pos, len);
      pos += len;
      o += len;
      continue;
    }
    if ((tag & 3) == 1) {
      if (pos >= n) return REFUSED;
      len = ((tag >> 2) & 7) + 4;
      offset = ((u32)(tag >> 5) << 8) | in[pos++];
    } else if ((tag & 3) == 2) {
      if (pos + 2 > n) return REFUSED;
      len = (tag >> 2) + 1;
      offset = in[pos] | (in[pos + 1] << 8);
      pos += 2;
    } else {
      if (pos + 4 > n) return REFUSED;
      len = (tag >> 2) + 1;
      offset = in[pos] | (in[pos + 1] << 8) | (in[pos + 2] << 16) | ((u32)in[pos + 3] << 24);
      pos += 4;
    }
    if (offset == 0 || offset > o || len > size - o) return REFUSED;
    u8 *to = out + o;
    const u8 *from = to - offset;
    // an overlapping copy repeats the bytes it is writing: byte by byte, in order. From 16 bytes back or
    // more, 16-byte words in order do the same (each reads only bytes written before it); from 8 back, two
    // 8-byte words for up to 16 (the second reads what the first wrote)
    if (offset >= 16 && size - o >= words16(len))
      for (u32 j = 0; j < len; j += 16) copy16(to + j, from + j);
    else if (offset >= 8 && len <= 16 && size - o >= 16) {
      copy8(to, from);
      copy8(to + 8, from + 8);
    } else if (offset >= len)
      __builtin_memcpy(to, from, len);
    else
      for (u32 j = 0; j < len; j++) to[j] = from[j];
    o += len;
  }
  return o == size ? OK : REFUSED;
}

// ---------------------------------------------------------------------------------------------------
// A page header (parquet.thrift PageHeader) in Thrift's compact protocol

typedef struct {
  i32 type, uncompressed, compressed, values, encoding, def_encoding, def_length, rep_length, compressed_v2;
} Header;

static const u8 *tp, *te; // the header being read, and the end of the chunk
static int terr;

static u8 tbyte(void) {
  if (tp >= te) {
    terr = 1;
    return 0;
  }
  return *tp++;
}

static u64 tvarint(void) {
  u64 v = 0;
  for (u32 shift = 0; !terr; shift += 7) {
    u8 c = tbyte();
    if (shift > 63) terr = 1;
    v |= (u64)(c & 0x7f) << (shift & 63);
    if (c < 0x80) return v;
  }
  return 0;
}

/** A zigzag varint that must fit an i32 (sizes and counts); anything else is a header this kernel refuses. */
static i32 tint(void) {
  u64 v = tvarint();
  i64 x = (i64)(v >> 1) ^ -(i64)(v & 1);
  if (x < -2147483647LL - 1 || x > 2147483647LL) terr = 1;
  return (i32)x;
}

static void tskip(int type, int depth);

/* An element of a list, set or map: a boolean there is a byte of its own (Thrift's compact protocol). */
static void telement(int type, int depth) {
  if (type == 1 || type == 2) tbyte();
  else tskip(type, depth);
}

static void tskip_struct(int depth) {
  for (;;) {
    u8 h = tbyte();
    if (terr || (h & 15) == 0) return;
    if ((h >> 4) == 0) tint();
    tskip(h & 15, depth);
    if (terr) return;
  }
}

static void tskip(int type, int depth) {
  if (depth > 16) {
    terr = 1;
    return;
  }
  switch (type) {
    case 1: // true
    case 2: // false: a field's value is in its type
      return;
    case 3:
      tbyte();
      return;
    case 4:
    case 5:
    case 6:
      tvarint();
      return;
    case 7:
      if (te - tp < 8) terr = 1;
      else tp += 8;
      return;
    case 8: {
      u64 n = tvarint();
      if (n > (u64)(te - tp)) terr = 1;
      else tp += n;
      return;
    }
    case 9:
    case 10: {
      u8 h = tbyte();
      u64 n = h >> 4 == 15 ? tvarint() : h >> 4;
      int t = h & 15;
      // each element takes a byte or more: a longer list is refused before any is read
      if (n > (u64)(te - tp)) terr = 1;
      for (u64 i = 0; i < n && !terr; i++) telement(t, depth + 1);
      return;
    }
    case 11: {
      u64 n = tvarint();
      if (n == 0) return;
      u8 kv = tbyte();
      // each entry takes two bytes or more (a boolean key or value its own byte): a longer map is refused
      if (n > (u64)(te - tp) / 2) terr = 1;
      for (u64 i = 0; i < n && !terr; i++) {
        telement(kv >> 4, depth + 1);
        telement(kv & 15, depth + 1);
      }
      return;
    }
    case 12:
      tskip_struct(depth + 1);
      return;
    default:
      terr = 1;
  }
}

/** The fields parquet-reader.ts reads; any of them in a type other than its own is refused. */
static void theader(Header *h) {
  *h = (Header){.type = -1, .def_encoding = 3, .compressed_v2 = 1};
  i32 id = 0;
  for (;;) {
    u8 b = tbyte();
    if (terr || (b & 15) == 0) return;
    int type = b & 15;
    id = b >> 4 ? id + (b >> 4) : tint();
    if (id >= 1 && id <= 3) {
      if (type != 5) terr = 1;
      i32 v = tint();
      if (id == 1) h->type = v;
      else if (id == 2) h->uncompressed = v;
      else h->compressed = v;
    } else if ((id == 5 || id == 7 || id == 8) && type == 12) {
      i32 sid = 0;
      for (;;) {
        u8 c = tbyte();
        if (terr || (c & 15) == 0) break;
        int st = c & 15;
        sid = c >> 4 ? sid + (c >> 4) : tint();
        int ints = id == 5 ? sid <= 3 : id == 7 ? sid == 1 : sid == 1 || (sid >= 4 && sid <= 6);
        if (ints) {
          if (st != 5) terr = 1;
          i32 v = tint();
          if (sid == 1) h->values = v;
          else if (sid == 2 && id == 5) h->encoding = v;
          else if (sid == 3) h->def_encoding = v;
          else if (sid == 4) h->encoding = v;
          else if (sid == 5) h->def_length = v;
          else if (sid == 6) h->rep_length = v;
        } else if (id == 8 && sid == 7) {
          if (st != 1 && st != 2) terr = 1;
          h->compressed_v2 = st == 1;
        } else tskip(st, 1);
        if (terr) return;
      }
    } else tskip(type, 0);
    if (terr) return;
  }
}

// ---------------------------------------------------------------------------------------------------
// The RLE / bit-packing hybrid (Encodings.md), with parquet-reader.ts `hybrid`'s checks

/** A run's header at b[*pos] (before `end`): a ULEB128 of at most 4 bytes; REFUSED when longer or cut. */
static int run_header(const u8 *b, u32 *pos, u32 end, u32 *header) {
  u32 h = 0, p = *pos;
  for (u32 shift = 0;; shift += 7) {
    u8 c = b[p++];
    h |= (u32)(c & 0x7f) << shift;
    if (c < 0x80) break;
    if (p >= end || shift >= 21) return REFUSED;
  }
  *pos = p, *header = h;
  return OK;
}

/** A repeated run's value at b[*pos]: `per` bytes, little-endian; REFUSED past `end` or with bits past `mask`. */
static int run_value(const u8 *b, u32 *pos, u32 end, u32 per, u32 mask, u32 *value) {
  if ((u64)*pos + per > end) return REFUSED;
  u32 v = 0;
  for (u32 j = 0; j < per; j++) v |= (u32)b[*pos + j] << (8 * j);
  *pos += per;
  if (v & ~mask) return REFUSED;
  *value = v;
  return OK;
}

/**
 * n values of `width` bits from b[pos, end) into out; REFUSED for a run header over 4 bytes, a run past
 * `end`, a repeated run's value with bits past `width` (a definition level above 1, say: whatever the run's
 * count, as parquet-reader.ts checks it), or a value of `limit` or more.
 */
static int hybrid(const u8 *b, u32 pos, u32 end, u32 width, u32 n, u32 *out, u32 limit) {
  if (width > 32) return REFUSED;
  u32 mask = width == 32 ? 0xffffffffu : (1u << width) - 1;
  u32 per = (width + 7) / 8, k = 0;
  while (k < n) {
    if (pos >= end) return REFUSED;
    u32 header;
    if (run_header(b, &pos, end, &header)) return REFUSED;
    if (header & 1) {
      u64 count = (u64)(header >> 1) * 8;
      u32 stop = count < n - k ? (u32)count : n - k;
      if ((u64)pos + ((u64)stop * width + 7) / 8 > end) return REFUSED;
      u32 i = 0, p = pos;
      // eight values of a narrow width (levels, booleans, small dictionaries) fill `width` whole bytes:
      // read as one word while eight bytes remain in the page
      if (width <= 8)
        for (; i + 8 <= stop && p + 8 <= end; i += 8, p += width) {
          u64 word;
          __builtin_memcpy(&word, b + p, 8);
          for (u32 j = 0; j < 8; j++) {
            u32 v = (u32)(word >> (j * width)) & mask;
            if (v >= limit) return REFUSED;
            out[k + i + j] = v;
          }
        }
      u64 acc = 0;
      u32 bits = 0;
      if (width > 8) {
        // wider values (a dictionary of more than 256) each from the eight bytes at its first bit, while
        // eight bytes remain: one load a value, not one a byte
        for (; i < stop; i++) {
          u64 bit = (u64)i * width;
          if (p + (bit >> 3) + 8 > end) break;
          u64 word;
          __builtin_memcpy(&word, b + p + (bit >> 3), 8);
          u32 v = (u32)(word >> (bit & 7)) & mask;
          if (v >= limit) return REFUSED;
          out[k + i] = v;
        }
        // the rest a byte at a time, from the byte the next value begins in (its bits past it first)
        u64 bit = (u64)i * width;
        p += (u32)(bit >> 3);
        if (bit & 7) {
          acc = (u64)(p < end ? b[p] : 0) >> (bit & 7);
          p++;
          bits = 8 - (u32)(bit & 7);
        }
      }
      for (; i < stop; i++) {
        while (bits < width) {
          acc |= (u64)(p < end ? b[p] : 0) << bits;
          p++;
          bits += 8;
        }
        u32 v = (u32)acc & mask;
        if (v >= limit) return REFUSED;
        out[k + i] = v;
        acc >>= width;
        bits -= width;
      }
      u64 next = (u64)pos + (count * width + 7) / 8;
      pos = next > end ? end : (u32)next;
      k += stop;
    } else {
      u32 count = header >> 1, v;
      if (run_value(b, &pos, end, per, mask, &v)) return REFUSED;
      u32 stop = count < n - k ? count : n - k;
      if (stop > 0 && v >= limit) return REFUSED;
      for (u32 i = 0; i < stop; i++) out[k + i] = v;
      k += stop;
    }
  }
  return OK;
}

// ---------------------------------------------------------------------------------------------------
// A column chunk

enum { BOOLEAN = 0, INT32 = 1, INT64 = 2, FLOAT = 4, DOUBLE = 5, BYTE_ARRAY = 6 };
enum { K_STRING = 0, K_NUMBER = 1, K_BOOLEAN = 2, K_DATE = 3, K_TIMESTAMP = 4 };
enum { C_UNCOMPRESSED = 0, C_SNAPPY = 1 };

/**
 * The values at `n` places `at` (ascending, each below `count`, the values the hybrid holds), written over
 * the places: its runs walked up to the last place asked, each run checked as `hybrid` checks it, and
 * REFUSED likewise, or for a value asked of `limit` or more (parquet-reader.ts hybridAt reads so).
 */
static int hybrid_at(const u8 *b, u32 pos, u32 end, u32 width, u32 count, u32 *at, u32 n, u32 limit) {
  if (width > 32) return REFUSED;
  u32 mask = width == 32 ? 0xffffffffu : (1u << width) - 1;
  u32 per = (width + 7) / 8, k = 0, i = 0;
  while (i < n) {
    if (pos >= end || k >= count) return REFUSED;
    u32 header;
    if (run_header(b, &pos, end, &header)) return REFUSED;
    if (header & 1) {
      u64 run = (u64)(header >> 1) * 8;
      u32 stop = run < count - k ? (u32)run : count - k;
      if ((u64)pos + ((u64)stop * width + 7) / 8 > end) return REFUSED;
      for (; i < n && at[i] < k + stop; i++) {
        // the value's bits from the bytes that hold them (at most 5 for 32 bits at an odd offset)
        u64 bit = (u64)(at[i] - k) * width, acc = 0;
        u32 first = pos + (u32)(bit >> 3);
        for (u32 j = 0; j < 5 && first + j < end; j++) acc |= (u64)b[first + j] << (8 * j);
        u32 v = (u32)(acc >> (bit & 7)) & mask;
        if (v >= limit) return REFUSED;
        at[i] = v;
      }
      u64 next = (u64)pos + (run * width + 7) / 8;
      pos = next > end ? end : (u32)next;
      k += stop;
    } else {
      u32 c = header >> 1, v;
      if (run_value(b, &pos, end, per, mask, &v)) return REFUSED;
      u32 stop = c < count - k ? c : count - k;
      if (stop > 0 && v >= limit) return REFUSED;
      for (; i < n && at[i] < k + stop; i++) at[i] = v;
      k += stop;
    }
  }
  return OK;
}

static u32 read32(const u8 *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | ((u32)p[3] << 24); }

static int value_empty; // the last PLAIN value was an empty text (no key: export-reader.ts asText gives '')

/** Start reading the pages of a column chunk. */
static void chunk_begin(const u8 *chunk, u32 length) {
  tp = chunk;
  te = chunk + length;
  terr = 0;
}

/**
 * A BOOLEAN page's values encoded RLE: a 4-byte length, then the hybrid at bit width 1 (from vals + 4);
 * the hybrid's length in `len`, REFUSED when it passes the page.
 */
static int rle_booleans(const u8 *vals, const u8 *vend, u32 *len) {
  if (vend - vals < 4) return REFUSED;
  *len = read32(vals);
  return *len > (u32)(vend - vals) - 4 ? REFUSED : OK;
}

/** The next page of the chunk: its header, checked, and its body; REFUSED when the chunk ends first. */
static int next_page(Header *h, const u8 **body) {
  if (tp >= te) return REFUSED; // a chunk shorter than its rows
  theader(h);
  if (terr || h->compressed < 0 || h->compressed > te - tp || h->values < 0 || h->def_length < 0 ||
      h->uncompressed < 0)
    return REFUSED;
  *body = tp;
  tp += h->compressed;
  return OK;
}

/** A page's bytes as the codec left them: `body` itself, or Snappy's output in `into` (`cap` bytes). */
static int page_bytes(const u8 *body, u32 compressed, u32 uncompressed, int codec, u8 *into, u32 cap,
                      const u8 **page, u32 *size) {
  if (codec == C_UNCOMPRESSED) {
    *page = body, *size = compressed;
    return OK;
  }
  if (uncompressed > cap || unsnappy(body, compressed, into, uncompressed)) return REFUSED;
  *page = into, *size = uncompressed;
  return OK;
}

/** A data page's values [vals, vend) and its definition levels [defs, defs + defs_len) (none: defs 0). */
typedef struct {
  const u8 *vals, *vend, *defs;
  u32 defs_len;
} Page;

/**
 * A data page laid open as parquet-reader.ts pageOf does: a DATA_PAGE_V2's levels first, never compressed,
 * then its values, compressed unless is_compressed says not; a DATA_PAGE's levels (a 4-byte length, then
 * the hybrid) inside its compressed body. Values decompressed into `scratch`.
 */
static int data_page(const Header *h, const u8 *body, int optional, int codec, u8 *scratch, u32 scratch_cap,
                     Page *pg) {
  pg->defs = 0, pg->defs_len = 0;
  if (h->type == 3) {
    if (h->rep_length || h->def_length > h->compressed) return REFUSED;
    if (optional) pg->defs = body, pg->defs_len = h->def_length;
    const u8 *v = body + h->def_length;
    u32 vlen = h->compressed - h->def_length;
    if (!h->compressed_v2 || codec == C_UNCOMPRESSED) {
      pg->vals = v, pg->vend = v + vlen;
      return OK;
    }
    if (h->uncompressed < h->def_length) return REFUSED;
    const u8 *page;
    u32 size;
    if (page_bytes(v, vlen, h->uncompressed - h->def_length, codec, scratch, scratch_cap, &page, &size))
      return REFUSED;
    pg->vals = page, pg->vend = page + size;
    return OK;
  }
  const u8 *page;
  u32 size;
  if (page_bytes(body, h->compressed, h->uncompressed, codec, scratch, scratch_cap, &page, &size)) return REFUSED;
  pg->vals = page, pg->vend = page + size;
  if (!optional) return OK;
  if (h->def_encoding != 3 || size < 4) return REFUSED;
  u32 dl = read32(page);
  if (dl > size - 4) return REFUSED;
  pg->defs = page + 4, pg->defs_len = dl;
  pg->vals = page + 4 + dl;
  return OK;
}

/** A page's `n` definition levels into `levels` (0 null, 1 a value; none: every row a value), and how many are 1. */
static int levels_of(const Page *pg, u32 n, u32 *levels, u32 *present) {
  *present = n;
  if (!pg->defs) return OK;
  if (hybrid(pg->defs, 0, pg->defs_len, 1, n, levels, 2)) return REFUSED;
  u32 k = 0;
  for (u32 i = 0; i < n; i++) k += levels[i];
  *present = k;
  return OK;
}

#define NO_VALUE 0xffffffffu // a row at definition level 0

/**
 * The bits set in bits[from, to) (bit i: byte i / 8, from its low end): to a byte's edge one at a time,
 * then eight bytes, then single bytes, at a popcount each. The rows between two wanted ones were counted a
 * bit each (a wanted row in 50 at 200,000 records a side: 6 of the read-back's 38 ms in the kernel, CPU
 * profile of a build without inlining); the bytes read all lie below `to`, within the run.
 */
__attribute__((noinline)) static u32 count_bits(const u8 *bits, u32 from, u32 to) {
  u32 n = 0, b = from;
  for (; b < to && (b & 7); b++) n += (bits[b >> 3] >> (b & 7)) & 1;
  for (; b + 64 <= to; b += 64) {
    u64 w;
    __builtin_memcpy(&w, bits + (b >> 3), 8);
    n += (u32)__builtin_popcountll(w);
  }
  for (; b + 8 <= to; b += 8) n += (u32)__builtin_popcount(bits[b >> 3]);
  for (; b < to; b++) n += (bits[b >> 3] >> (b & 7)) & 1;
  return n;
}

/**
 * A page's definition levels walked by runs (parquet-reader.ts valueIndexes does so) for the rows `at`
 * (`m` of them, ascending, each below the page's `n`): each becomes its value's place among the page's
 * values, or NO_VALUE at level 0; `present` gets how many values the page holds. Every run to the page's
 * end is checked as `hybrid` checks it (width 1: a repeated level above 1, a run past the levels), so this
 * refuses what levels_of refuses, without writing a level a row.
 */
static int levels_at(const Page *pg, u32 n, u32 *at, u32 m, u32 *present) {
  *present = n;
  if (!pg->defs) return OK;
  const u8 *b = pg->defs;
  u32 pos = 0, end = pg->defs_len, r = 0, k = 0, i = 0;
  while (r < n) {
    if (pos >= end) return REFUSED;
    u32 header;
    if (run_header(b, &pos, end, &header)) return REFUSED;
    if (header & 1) {
      u64 count = (u64)(header >> 1) * 8;
      u32 stop = count < n - r ? (u32)count : n - r;
      if ((u64)pos + (stop + 7) / 8 > end) return REFUSED;
      const u8 *bits = b + pos;
      u32 seen = 0, bit = 0; // values among the run's first `bit` rows
      for (; i < m && at[i] < r + stop; i++) {
        u32 o = at[i] - r;
        seen += count_bits(bits, bit, o);
        bit = o;
        at[i] = (bits[o >> 3] >> (o & 7)) & 1 ? k + seen : NO_VALUE;
      }
      k += seen + count_bits(bits, bit, stop);
      u64 next = (u64)pos + (count + 7) / 8;
      pos = next > end ? end : (u32)next;
      r += stop;
    } else {
      u32 count = header >> 1;
      u32 v;
      if (run_value(b, &pos, end, 1, 1, &v)) return REFUSED;
      u32 stop = count < n - r ? count : n - r;
      for (; i < m && at[i] < r + stop; i++) at[i] = v ? k + at[i] - r : NO_VALUE;
      k += v * stop;
      r += stop;
    }
  }
  *present = k;
  return OK;
}

/**
 * One PLAIN value's place at p (before end): its size, 0 when the page ends first. `num` gets a number
 * (a BOOLEAN has no PLAIN place of its own: its bits are read by the caller).
 */
static u32 plain_place(const u8 *p, const u8 *end, int phys, double *num) {
  if (p > end) return 0;
  u32 room = end - p;
  switch (phys) {
    case BYTE_ARRAY: {
      if (room < 4) return 0;
      u32 n = read32(p);
      return n > room - 4 ? 0 : 4 + n;
    }
    case DOUBLE:
      if (room < 8) return 0;
      __builtin_memcpy(num, p, 8);
      return 8;
    case FLOAT: {
      if (room < 4) return 0;
      float x;
      __builtin_memcpy(&x, p, 4);
      *num = x;
      return 4;
    }
    case INT32:
      if (room < 4) return 0;
      *num = (double)(i32)read32(p);
      return 4;
    case INT64: {
      if (room < 8) return 0;
      i64 x;
      __builtin_memcpy(&x, p, 8);
      *num = (double)x;
      return 8;
    }
  }
  return 0;
}

/**
 * One PLAIN value at p (before end) fingerprinted into out_a, out_b, as scan-parquet.ts `fingerprints`
 * does from the table parquet-reader.ts makes (a DATE and a TIMESTAMP by their text, a value only
 * JavaScript fingerprints noted in `slow`, an empty text in `value_empty`); returns its size, 0 when the
 * page ends first.
 */
static u32 plain_value(const u8 *p, const u8 *end, int phys, int kind) {
  double x;
  u32 size = plain_place(p, end, phys, &x);
  if (!size) return 0;
  if (phys == BYTE_ARRAY) {
    hash_text(p + 4, size - 4);
    value_empty = size == 4;
  } else if (kind == K_DATE)
    hash_date((i32)x);
  else if (kind == K_TIMESTAMP)
    hash_timestamp(x);
  else if (__builtin_isfinite(x))
    hash_number(x);
  else
    slow = 1;
  return size;
}

static u32 true_a, true_b, false_a, false_b; // a boolean is the text true or false

/**
 * Add the fingerprints of one column chunk's values into its rows' sums (`sums_a`, `sums_b`: the row
 * group's `rows`) when it is `compared`, as parquet-reader.ts decodeChunk with RowSums does; and when it is
 * a key (`rank`: 2 the property id, 1 the APN, 0 none), make each row's non-empty value its key unless a
 * key of the same or a higher rank is there (`key`, `key_a`, `key_b`), as scan-parquet.ts addColumn does.
 * The work space: `scratch` for a decompressed page (`scratch_cap` bytes), `levels`, `idx`, `part_a`,
 * `part_b` and `has` for `rows` values each, `la`, `lb`, `dict_empty` for `dict_cap` dictionary values. The
 * chunk's own fingerprints go into `part_a`, `part_b` (a row's one value's; `has` 0 null, 1 an empty text,
 * 2 a value) and into the sums and keys only when the whole chunk is read: a chunk given back adds nothing.
 */
__attribute__((export_name("sum_chunk"))) i32 sum_chunk(
    const u8 *chunk, u32 length, u32 rows, i32 phys, i32 kind, i32 optional, i32 codec, u32 seed_lane_a,
    u32 seed_lane_b, double unit_ms, i32 *sums_a, i32 *sums_b, i32 *part_a, i32 *part_b, u8 *scratch,
    u32 scratch_cap, u32 *levels, u32 *idx, i32 *la, i32 *lb, u32 dict_cap, i32 compared, i32 rank, u8 *has,
    u8 *dict_empty, u8 *key, i32 *key_a, i32 *key_b) {
  if (codec != C_UNCOMPRESSED && codec != C_SNAPPY) return REFUSED;
  seed_a = seed_lane_a;
  seed_b = seed_lane_b;
  ms_per_unit = unit_ms;
  slow = 0;
  if (kind == K_BOOLEAN) {
    hash_bytes((const u8 *)"true", 4);
    true_a = out_a, true_b = out_b;
    hash_bytes((const u8 *)"false", 5);
    false_a = out_a, false_b = out_b;
  }
  // part_a, part_b and has are not cleared first: the data pages cover the rows one after another, and
  // each page sets every row it covers (a null row to 0), so each row is set once in a chunk read whole
  // (one pass over a chunk's rows fewer: 0.96x CPU at 1,000,000 records a side, docs/performance.md)
  u32 row = 0, dict_size = 0;
  int dict = 0;
  chunk_begin(chunk, length);
  while (row < rows) {
    Header h;
    const u8 *body;
    if (next_page(&h, &body)) return REFUSED;
    if (h.type == 2) {
      // the dictionary: its values' fingerprints by index
      if (dict || row > 0) return REFUSED;
      const u8 *page;
      u32 size;
      if (page_bytes(body, h.compressed, h.uncompressed, codec, scratch, scratch_cap, &page, &size))
        return REFUSED;
      if ((u32)h.values > dict_cap) return REFUSED;
      const u8 *p = page, *end = page + size;
      for (i32 i = 0; i < h.values; i++) {
        value_empty = 0;
        u32 used = plain_value(p, end, phys, kind);
        if (!used) return REFUSED;
        p += used;
        la[i] = out_a;
        lb[i] = out_b;
        dict_empty[i] = value_empty;
      }
      if (slow) return SLOW;
      dict = 1;
      dict_size = h.values;
      continue;
    }
    if (h.type != 0 && h.type != 3) continue; // an index page
    u32 n = h.values;
    if (n > rows - row) return REFUSED; // more values than rows
    Page pg;
    u32 present;
    if (data_page(&h, body, optional, codec, scratch, scratch_cap, &pg) || levels_of(&pg, n, levels, &present))
      return REFUSED;
    const u8 *vals = pg.vals, *vend = pg.vend;
    int defs = pg.defs != 0;
    i32 *pa = part_a + row, *pb = part_b + row;
    u8 *ph = has + row;
    if (h.encoding == 8 || h.encoding == 2) {
      // RLE_DICTIONARY (PLAIN_DICTIONARY): a bit width, then the indices
      if (!dict) return REFUSED;
      if (vals >= vend) return REFUSED;
      if (hybrid(vals, 1, vend - vals, vals[0], present, idx, dict_size)) return REFUSED;
      if (!defs)
        for (u32 r = 0; r < n; r++) {
          u32 x = idx[r];
          pa[r] = la[x];
          pb[r] = lb[x];
          ph[r] = 2 - dict_empty[x];
        }
      else
        for (u32 r = 0, k = 0; r < n; r++) {
          if (!levels[r]) {
            pa[r] = pb[r] = ph[r] = 0;
            continue;
          }
          u32 x = idx[k++];
          pa[r] = la[x];
          pb[r] = lb[x];
          ph[r] = 2 - dict_empty[x];
        }
    } else if (h.encoding == 3 && phys == BOOLEAN) {
      u32 bl;
      if (rle_booleans(vals, vend, &bl) || hybrid(vals + 4, 0, bl, 1, present, idx, 2)) return REFUSED;
      for (u32 r = 0, k = 0; r < n; r++) {
        if (defs && !levels[r]) {
          pa[r] = pb[r] = ph[r] = 0;
          continue;
        }
        int bit = idx[k++];
        pa[r] = bit ? true_a : false_a;
        pb[r] = bit ? true_b : false_b;
        ph[r] = 2;
      }
    } else if (h.encoding == 0 && phys == BOOLEAN) {
      if ((u32)(vend - vals) < (present + 7) / 8) return REFUSED;
      for (u32 r = 0, k = 0; r < n; r++) {
        if (defs && !levels[r]) {
          pa[r] = pb[r] = ph[r] = 0;
          continue;
        }
        int bit = (vals[k >> 3] >> (k & 7)) & 1;
        k++;
        pa[r] = bit ? true_a : false_a;
        pb[r] = bit ? true_b : false_b;
        ph[r] = 2;
      }
    } else if (h.encoding == 0) {
      const u8 *p = vals;
      for (u32 r = 0; r < n; r++) {
        if (defs && !levels[r]) {
          pa[r] = pb[r] = ph[r] = 0;
          continue;
        }
        value_empty = 0;
        u32 used = plain_value(p, vend, phys, kind);
        if (!used) return REFUSED;
        p += used;
        pa[r] = out_a;
        pb[r] = out_b;
        ph[r] = 2 - value_empty;
      }
      if (slow) return SLOW;
    } else return REFUSED;
    row += n;
  }
  if (compared)
    for (u32 r = 0; r < rows; r++) {
      sums_a[r] += part_a[r];
      sums_b[r] += part_b[r];
    }
  if (rank)
    for (u32 r = 0; r < rows; r++)
      if (has[r] == 2 && key[r] < rank) {
        key[r] = rank;
        key_a[r] = part_a[r];
        key_b[r] = part_b[r];
      }
  return OK;
}

// ---------------------------------------------------------------------------------------------------
// Rows read back (src/changes/read.ts): the values of one column chunk at a few rows

enum { TAG_NULL = 0, TAG_NUMBER = 1, TAG_BYTES = 2, TAG_PENDING = 3 };

/**
 * The values of one column chunk at the rows `want` (`wanted` of them, ascending, within `rows`), as
 * parquet-reader.ts pickChunk reads them: for each, `tag` null, a number (`num`: a number column's value, a
 * DATE's days, a TIMESTAMP's units, a boolean's 0 or 1) or a text's bytes (`len` of them at the address
 * `start`, in the arena or the dictionary's buffer, until the next call). A page holding no wanted row is
 * not read, and of one that holds some only the wanted values are (as pickChunk: its levels whole, its
 * values walked to the last one wanted), each check of pickChunk made here too or a stricter one: what
 * this refuses, pickChunk reads and judges. Work space as
 * sum_chunk's, with `dict` for the dictionary page (`dict_cap` bytes) and `dstart`, `dlen` for its values.
 */
__attribute__((export_name("pick_chunk"))) i32 pick_chunk(
    const u8 *chunk, u32 length, u32 rows, i32 phys, i32 optional, i32 codec, const u32 *want, u32 wanted,
    u8 *tag, double *num, u32 *start, u32 *len, u8 *arena, u32 arena_cap, u8 *scratch, u32 scratch_cap,
    u8 *dict, u32 dict_cap, u32 *idx, u32 *dstart, u32 *dlen, u32 dict_values_cap) {
  if (codec != C_UNCOMPRESSED && codec != C_SNAPPY) return REFUSED;
  for (u32 i = 0; i < wanted; i++)
    if (want[i] >= rows || (i > 0 && want[i] <= want[i - 1])) return REFUSED;
  u32 row = 0, wi = 0, used = 0, dict_size = 0;
  const u8 *dpage = 0;
  u32 dpage_len = 0, dvalues = 0;
  int have_dict_page = 0, dict_read = 0;
  chunk_begin(chunk, length);
  while (row < rows && wi < wanted) {
    Header h;
    const u8 *body;
    if (next_page(&h, &body)) return REFUSED;
    if (h.type == 2) {
      if (have_dict_page || row > 0) return REFUSED;
      have_dict_page = 1;
      dpage = body, dpage_len = h.compressed, dvalues = h.values;
      dict_size = h.uncompressed;
      continue;
    }
    if (h.type != 0 && h.type != 3) continue;
    u32 n = h.values;
    if (n > rows - row) return REFUSED;
    u32 wj = wi;
    while (wj < wanted && want[wj] < row + n) wj++;
    if (wj == wi) {
      row += n; // no wanted row here: not even decompressed
      continue;
    }
    int dictionary = h.encoding == 8 || h.encoding == 2;
    if (dictionary && !dict_read) {
      // the dictionary, into its own buffer (the data pages use the scratch one)
      if (!have_dict_page) return REFUSED;
      const u8 *page;
      u32 size;
      if (page_bytes(dpage, dpage_len, dict_size, codec, dict, dict_cap, &page, &size)) return REFUSED;
      if (dvalues > dict_values_cap) return REFUSED;
      const u8 *p = page, *end = page + size;
      for (u32 i = 0; i < dvalues; i++) {
        double x;
        u32 s = plain_place(p, end, phys, &x);
        if (!s) return REFUSED;
        dstart[i] = p - page;
        dlen[i] = s;
        p += s;
      }
      dpage = page; // the decoded page, which dstart indexes
      dict_read = 1;
    }
    Page pg;
    u32 present, m = wj - wi;
    for (u32 i = 0; i < m; i++) idx[i] = want[wi + i] - row;
    if (data_page(&h, body, optional, codec, scratch, scratch_cap, &pg) || levels_at(&pg, n, idx, m, &present))
      return REFUSED;
    const u8 *vals = pg.vals, *vend = pg.vend;
    // each wanted row's value: a null, or its place among the page's values (kept in `idx`, ascending)
    u32 q = 0;
    for (u32 i = 0; i < m; i++) {
      if (idx[i] == NO_VALUE) tag[wi + i] = TAG_NULL;
      else {
        tag[wi + i] = TAG_PENDING;
        idx[q++] = idx[i];
      }
    }
    // those values alone: a dictionary index or a bit where it lies, a PLAIN value's place in the page
    if (dictionary) {
      if (vals >= vend) return REFUSED;
      if (hybrid_at(vals, 1, vend - vals, vals[0], present, idx, q, dvalues)) return REFUSED;
    } else if (h.encoding == 3 && phys == BOOLEAN) {
      u32 bl;
      if (rle_booleans(vals, vend, &bl) || hybrid_at(vals + 4, 0, bl, 1, present, idx, q, 2)) return REFUSED;
    } else if (h.encoding == 0 && phys == BOOLEAN) {
      if ((u32)(vend - vals) < (present + 7) / 8) return REFUSED;
      for (u32 i = 0; i < q; i++) idx[i] = (vals[idx[i] >> 3] >> (idx[i] & 7)) & 1;
    } else if (h.encoding == 0 && phys == BYTE_ARRAY) {
      // texts lie one after the other: walked to the last one wanted, each length checked on the way
      const u8 *p = vals;
      for (u32 i = 0, v = 0; i < q; i++) {
        for (; v < idx[i]; v++) {
          double x;
          u32 size = plain_place(p, vend, phys, &x);
          if (!size) return REFUSED;
          p += size;
        }
        idx[i] = p - vals;
      }
    } else if (h.encoding == 0) {
      // fixed widths: a value's place is its index times the width, within the page (as pickChunk checks)
      u32 size = phys == INT64 || phys == DOUBLE ? 8 : 4, room = vend - vals;
      for (u32 i = 0; i < q; i++) {
        if ((u64)idx[i] * size + size > room) return REFUSED;
        idx[i] *= size;
      }
    } else return REFUSED;
    // the wanted rows' cells
    for (u32 i = 0; wi < wj; wi++) {
      if (tag[wi] == TAG_NULL) continue;
      u32 x = idx[i++];
      if (phys == BOOLEAN) {
        tag[wi] = TAG_NUMBER;
        num[wi] = x;
        continue;
      }
      const u8 *p = dictionary ? dpage + dstart[x] : vals + x;
      const u8 *end = dictionary ? p + dlen[x] : vend;
      if (phys == BYTE_ARRAY) {
        // a dictionary's text stays where it is (its buffer outlives the call's pages); a page's is copied
        // out before the next page is decompressed over it: the arena holds at most the chunk's texts
        if (end - p < 4) return REFUSED;
        u32 n2 = read32(p);
        if (n2 > (u32)(end - p) - 4) return REFUSED;
        tag[wi] = TAG_BYTES;
        len[wi] = n2;
        if (dictionary) start[wi] = (u32)(p + 4);
        else {
          if (n2 > arena_cap - used) return REFUSED;
          __builtin_memcpy(arena + used, p + 4, n2);
          start[wi] = (u32)(arena + used);
          used += n2;
        }
      } else {
        tag[wi] = TAG_NUMBER;
        if (!plain_place(p, end, phys, &num[wi])) return REFUSED;
      }
    }
    row += n;
  }
  return wi == wanted ? OK : REFUSED;
}

// ---------------------------------------------------------------------------------------------------
// Slots (src/jobs/file-stats.ts): a column chunk's values as parquet-reader.ts decodeChunk gives them

/** One PLAIN value at *p into the table's slot `s` (a text's bytes copied into `tbytes` at *used); 0 when it does not fit. */
static int put_plain(const u8 **p, const u8 *end, int phys, u32 s, double *tnum, u32 *tstart, u32 *tlen,
                     u8 *tbytes, u32 bytes_cap, u32 *used) {
  u32 size = plain_place(*p, end, phys, &tnum[s]);
  if (!size) return 0;
  if (phys == BYTE_ARRAY) {
    u32 n = size - 4;
    if (n > bytes_cap - *used) return 0;
    __builtin_memcpy(tbytes + *used, *p + 4, n);
    tstart[s] = *used;
    tlen[s] = n;
    *used += n;
  }
  *p += size;
  return 1;
}

/**
 * The values of one column chunk (of `rows` rows) as parquet-reader.ts decodeChunk gives them: each row's
 * `slot` (-1 a null) into a table whose slots are the dictionary's values first, then each PLAIN value in
 * the order met; a slot's value in `tnum` (a number's value, a DATE's days, a TIMESTAMP's units, a
 * boolean's 0 or 1) or, for a text, `tlen` bytes at `tstart` in `tbytes`. `out[0]` gets the slots used,
 * `out[1]` the text bytes used. With `values` 0, only whether each row holds a value, as decodeChunk with a
 * RowPresence: slot 0 or -1, the table empty, no value read. Each check decodeChunk makes is made here too,
 * or a stricter one: what this refuses, decodeChunk reads and judges. Work space as sum_chunk's;
 * `table_cap` slots and `bytes_cap` text bytes at most.
 */
__attribute__((export_name("slot_chunk"))) i32 slot_chunk(
    const u8 *chunk, u32 length, u32 rows, i32 phys, i32 optional, i32 codec, i32 values, i32 *slot, u32 *out,
    double *tnum, u32 *tstart, u32 *tlen, u32 table_cap, u8 *tbytes, u32 bytes_cap, u8 *scratch,
    u32 scratch_cap, u32 *levels, u32 *idx) {
  if (codec != C_UNCOMPRESSED && codec != C_SNAPPY) return REFUSED;
  u32 row = 0, size = 0, used = 0, dict_size = 0;
  int dict = 0;
  chunk_begin(chunk, length);
  while (row < rows) {
    Header h;
    const u8 *body;
    if (next_page(&h, &body)) return REFUSED;
    if (h.type == 2) {
      if (dict || row > 0) return REFUSED;
      dict = 1;
      dict_size = h.values;
      if (!values) continue; // whether rows hold a value: the dictionary is not read
      const u8 *page;
      u32 psize;
      if (page_bytes(body, h.compressed, h.uncompressed, codec, scratch, scratch_cap, &page, &psize))
        return REFUSED;
      if (dict_size > table_cap || phys == BOOLEAN) return REFUSED;
      const u8 *p = page, *end = page + psize;
      for (u32 i = 0; i < dict_size; i++)
        if (!put_plain(&p, end, phys, size++, tnum, tstart, tlen, tbytes, bytes_cap, &used)) return REFUSED;
      continue;
    }
    if (h.type != 0 && h.type != 3) continue; // an index page
    u32 n = h.values;
    if (n > rows - row) return REFUSED; // more values than rows
    i32 *sl = slot + row;
    row += n;
    Page pg;
    u32 present;
    if (!values) {
      // the levels alone, as decodeChunk's markPresent reads them: a REQUIRED column's rows all hold a
      // value, a DATA_PAGE_V2's levels lie uncompressed before its values (which are not decompressed)
      if (!optional) {
        for (u32 r = 0; r < n; r++) sl[r] = 0;
        continue;
      }
      if (h.type == 3) {
        if (h.rep_length || h.def_length > h.compressed) return REFUSED;
        pg.defs = body, pg.defs_len = h.def_length;
      } else if (data_page(&h, body, optional, codec, scratch, scratch_cap, &pg))
        return REFUSED;
      if (levels_of(&pg, n, levels, &present)) return REFUSED;
      for (u32 r = 0; r < n; r++) sl[r] = levels[r] ? 0 : -1;
      continue;
    }
    if (data_page(&h, body, optional, codec, scratch, scratch_cap, &pg) || levels_of(&pg, n, levels, &present))
      return REFUSED;
    int defs = pg.defs != 0;
    const u8 *vals = pg.vals, *vend = pg.vend;
    if (h.encoding == 8 || h.encoding == 2) {
      // RLE_DICTIONARY (PLAIN_DICTIONARY): a bit width, then the indices, each a dictionary slot
      if (!dict || vals >= vend) return REFUSED;
      if (hybrid(vals, 1, vend - vals, vals[0], present, idx, dict_size)) return REFUSED;
      for (u32 r = 0, k = 0; r < n; r++) sl[r] = defs && !levels[r] ? -1 : (i32)idx[k++];
      continue;
    }
    if (present > table_cap - size) return REFUSED;
    if (h.encoding == 3 && phys == BOOLEAN) {
      // each value a slot of its own
      u32 bl;
      if (rle_booleans(vals, vend, &bl) || hybrid(vals + 4, 0, bl, 1, present, idx, 2)) return REFUSED;
      for (u32 r = 0, k = 0; r < n; r++) {
        if (defs && !levels[r]) sl[r] = -1;
        else tnum[size] = idx[k++], sl[r] = (i32)size++;
      }
    } else if (h.encoding == 0 && phys == BOOLEAN) {
      if ((u32)(vend - vals) < (present + 7) / 8) return REFUSED;
      for (u32 r = 0, k = 0; r < n; r++) {
        if (defs && !levels[r]) sl[r] = -1;
        else tnum[size] = (vals[k >> 3] >> (k & 7)) & 1, k++, sl[r] = (i32)size++;
      }
    } else if (h.encoding == 0) {
      const u8 *p = vals;
      for (u32 r = 0; r < n; r++) {
        if (defs && !levels[r]) sl[r] = -1;
        else if (!put_plain(&p, vend, phys, size, tnum, tstart, tlen, tbytes, bytes_cap, &used)) return REFUSED;
        else sl[r] = (i32)size++;
      }
    } else return REFUSED;
  }
  out[0] = size;
  out[1] = used;
  return OK;
}

// ---------------------------------------------------------------------------------------------------
// A county's entries classified (src/changes/compare.ts, step 2), for every format of export

/*
 * compare.ts `keyPrevious` and `classifyCurrent`, rule for rule, and the sweep after them: loops over every
 * record of a county that JavaScript runs once, cold (at 100,000 records a side, 15-20 ms of the main
 * thread; here under 2). An entry is six words (src/changes/entries.ts): its key's lanes, its digest's, its
 * offset. The table is id-table.ts's: open addressing, `mask + 1` slots (a power of two, at least twice the
 * keys) filled here, a slot holding the previous side's entry i as i and the current side's j as -j - 2.
 */
#define EW 6
enum { ST_PREVIOUS = 0, ST_UNCHANGED = 1, ST_UPDATED = 2, ST_REPEATED = 3 };

static const u32 *cp, *cc; // the two sides' entries
static i32 *cslots;
static u32 cmask, cprobe;

/** The slot value of key (a, b), or -1; `cprobe` is where a put would go. */
static i32 cget(u32 a, u32 b) {
  for (u32 i = a & cmask;; i = (i + 1) & cmask) {
    i32 v = cslots[i];
    if (v == -1) {
      cprobe = i;
      return -1;
    }
    const u32 *e = v >= 0 ? cp + (u32)v * EW : cc + (u32)(-v - 2) * EW;
    if (e[0] == a && e[1] == b) return v;
  }
}

/**
 * Classify the previous side's `np` entries `p` and the current side's `nc` entries `c`: `to` (`np` words)
 * and `map` (`nc` words) for scratch, `state` (`np` bytes); out: `added` (the current entries no previous
 * one keys, ascending), `todo` and `todo_to` (in the previous side's order, each previous entry deleted,
 * with -1, or updated, with the current entry it became), and `out`: duplicates, unchanged, added, todo,
 * and the current entries kept. Then each side's entries that are read back are moved, in order, to the
 * front of `p` and `c` (in place: an entry moves only towards the front, onto one already moved or not
 * read back), and the lists name them there: `todo` is 0, 1, 2... and `added`, `todo_to` are places among
 * the current side's kept entries. The caller copies out those few instead of holding every entry.
 */
__attribute__((export_name("classify"))) i32 classify(u32 *p, u32 np, u32 *c, u32 nc, i32 *slots, u32 mask,
                                                       u8 *state, i32 *to, i32 *map, i32 *added, i32 *todo,
                                                       i32 *todo_to, u32 *out) {
  cp = p, cc = c, cslots = slots, cmask = mask;
  for (u32 i = 0; i <= mask; i++) slots[i] = -1;
  u32 duplicates = 0, unchanged = 0, nadded = 0, ntodo = 0;
  // keyPrevious: each key into the table; a key met again is REPEATED (the table keeps the first)
  for (u32 i = 0; i < np; i++) {
    if (cget(p[i * EW], p[i * EW + 1]) != -1) {
      state[i] = ST_REPEATED;
      duplicates++;
    } else {
      state[i] = ST_PREVIOUS;
      slots[cprobe] = (i32)i;
    }
  }
  // classifyCurrent: the previous record after the last one matched first, the table after
  u32 guess = 0;
  for (u32 j = 0; j < nc; j++) {
    u32 ka = c[j * EW], kb = c[j * EW + 1];
    i32 v = guess < np && p[guess * EW] == ka && p[guess * EW + 1] == kb && state[guess] != ST_REPEATED
                ? (i32)guess
                : cget(ka, kb);
    if (v >= 0) guess = (u32)v + 1;
    if (v == -1) {
      slots[cprobe] = -(i32)j - 2;
      added[nadded++] = (i32)j;
    } else if (v < 0 || state[v] != ST_PREVIOUS)
      duplicates++;
    else if (p[v * EW + 2] == c[j * EW + 2] && p[v * EW + 3] == c[j * EW + 3]) {
      state[v] = ST_UNCHANGED;
      unchanged++;
    } else {
      state[v] = ST_UPDATED;
      to[v] = (i32)j;
    }
  }
  // the sweep: what changed on the previous side, in its order
  for (u32 i = 0; i < np; i++) {
    if (state[i] == ST_PREVIOUS) todo[ntodo] = (i32)i, todo_to[ntodo++] = -1;
    else if (state[i] == ST_UPDATED) todo[ntodo] = (i32)i, todo_to[ntodo++] = to[i];
  }
  // the entries read back, to the front of each side: the previous side's in todo's order
  for (u32 t = 0; t < ntodo; t++) {
    u32 i = (u32)todo[t];
    for (u32 w = 0; w < EW; w++) p[t * EW + w] = p[i * EW + w];
    todo[t] = (i32)t;
  }
  // the current side's: added, and those updated ones became, in the current side's order
  for (u32 j = 0; j < nc; j++) map[j] = -1;
  for (u32 a = 0; a < nadded; a++) map[added[a]] = 0;
  for (u32 t = 0; t < ntodo; t++)
    if (todo_to[t] >= 0) map[todo_to[t]] = 0;
  u32 kept = 0;
  for (u32 j = 0; j < nc; j++) {
    if (map[j] < 0) continue;
    for (u32 w = 0; w < EW; w++) c[kept * EW + w] = c[j * EW + w];
    map[j] = (i32)kept++;
  }
  for (u32 a = 0; a < nadded; a++) added[a] = map[added[a]];
  for (u32 t = 0; t < ntodo; t++)
    if (todo_to[t] >= 0) todo_to[t] = map[todo_to[t]];
  out[0] = duplicates;
  out[1] = unchanged;
  out[2] = nadded;
  out[3] = ntodo;
  out[4] = kept;
  return OK;
}
