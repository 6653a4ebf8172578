/*
 * units — parse and print quantities with units, once, centrally.
 *
 * Every size, rate, time, power, FLOP rate, count and price that enters tierplan from the command
 * line or a JSON file goes through cfg_parse_quantity(): a decimal number followed by an optional
 * unit suffix of the given kind ("80GiB", "25GB/s", "3.5us", "700W", "989TFLOPS", "100M").
 * Results are in base units: bytes, bytes per second, seconds, watts, FLOP/s, plain counts, USD.
 * GiB = 2^30 bytes, GB = 10^9 bytes; a lowercase "b" in a rate means bits ("400Gb/s").
 *
 * Invariants: the parsed value is finite, non-negative and at most CFG_QTY_MAX (2^62, so that
 * byte counts fit exactly in int64 and in a double's 53-bit mantissa for all realistic sizes);
 * a suffix that does not belong to the kind is an error, never silently ignored.
 * Failure: returns -1 and writes a one-line lowercase message (no final period) into err.
 * Only libc is used; the module could be lifted out as it is.
 */
#ifndef TIERPLAN_UNITS_H
#define TIERPLAN_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cfg_unit {
	CFG_U_SIZE,  /* bytes: B kB MB GB TB PB KiB MiB GiB TiB PiB; bare number = bytes */
	CFG_U_RATE,  /* bytes/s: GB/s GiB/s MB/s ...; bits: Gb/s Mb/s; bare number = B/s */
	CFG_U_TIME,  /* seconds: ns us ms s min h d; bare number = seconds */
	CFG_U_POWER, /* watts: W kW MW; bare number = W */
	CFG_U_FLOPS, /* FLOP/s: FLOPS GFLOPS TFLOPS PFLOPS; bare number = FLOP/s */
	CFG_U_COUNT, /* plain count: k M B (billion) T, or exponent form 1e9 */
	CFG_U_USD,   /* US dollars: optional leading '$' */
};

#define CFG_QTY_MAX 4611686018427387904.0 /* 2^62 */

/* Parses s as a quantity of the given kind into *out (base units). 0 ok, -1 with err filled. */
int cfg_parse_quantity(const char *s, enum cfg_unit kind, double *out, char *err, size_t errlen);

/* Like cfg_parse_quantity but the result must be a whole number: bytes, counts. */
int cfg_parse_u64(const char *s, enum cfg_unit kind, uint64_t *out, char *err, size_t errlen);

/* The unit suffixes a kind accepts, for help texts and error messages ("B, KiB, MiB, ..."). */
const char *cfg_unit_suffixes(enum cfg_unit kind);

/* Human formatting into buf (returns buf): binary sizes "79.6 GiB", "1.08 TiB"; durations
 * "412 ms", "3.2 h", "5.1 d"; powers "8.42 kW"; counts "70.55 B"; dollars "$1,234". */
char *cfg_fmt_bytes(double bytes, char *buf, size_t n);
char *cfg_fmt_seconds(double s, char *buf, size_t n);
char *cfg_fmt_watts(double w, char *buf, size_t n);
char *cfg_fmt_count(double c, char *buf, size_t n);
char *cfg_fmt_usd(double usd, char *buf, size_t n);
char *cfg_fmt_rate(double bytes_per_s, char *buf, size_t n);
/* The same in the unit that cfg_fmt_* picks for ref: the ends of a range in its value's unit,
 * "2.0-2.5 h" beside "2.1 h" where each alone would read "117.2 min" and "2.5 h". */
char *cfg_fmt_bytes_as(double bytes, double ref, char *buf, size_t n);
char *cfg_fmt_seconds_as(double s, double ref, char *buf, size_t n);

/* Columns text output keeps within: a terminal's 120 (plan --wide may pass it). */
#define CFG_TEXT_COLUMNS 120

/* Prints text from column col on, broken after its sep separators (the separator kept less its
 * trailing space: ", " leaves the comma, " " nothing) onto lines indented `indent` columns
 * wherever it would pass `width`; a piece longer than a line stands alone. Ends the line. */
void cfg_wrap(FILE *fp, size_t col, size_t indent, size_t width, const char *text,
	      const char *sep);

#endif
