/* units — see units.h. Suffix tables per kind; one number parser for all of them. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct suffix {
	const char *name;
	double mult;
};

static const struct suffix size_sfx[] = {
	{"", 1.0},
	{"B", 1.0},
	{"kB", 1e3},
	{"KB", 1e3},
	{"MB", 1e6},
	{"GB", 1e9},
	{"TB", 1e12},
	{"PB", 1e15},
	{"KiB", 1024.0},
	{"MiB", 1048576.0},
	{"GiB", 1073741824.0},
	{"TiB", 1099511627776.0},
	{"PiB", 1125899906842624.0},
	{NULL, 0},
};

static const struct suffix rate_sfx[] = {
	{"", 1.0},
	{"B/s", 1.0},
	{"kB/s", 1e3},
	{"KB/s", 1e3},
	{"MB/s", 1e6},
	{"GB/s", 1e9},
	{"TB/s", 1e12},
	{"KiB/s", 1024.0},
	{"MiB/s", 1048576.0},
	{"GiB/s", 1073741824.0},
	{"TiB/s", 1099511627776.0},
	{"kb/s", 1e3 / 8},
	{"Mb/s", 1e6 / 8},
	{"Gb/s", 1e9 / 8},
	{"Tb/s", 1e12 / 8},
	{"Gbps", 1e9 / 8},
	{NULL, 0},
};

static const struct suffix time_sfx[] = {
	{"", 1.0},       {"ns", 1e-9},       {"us", 1e-6},    {"ms", 1e-3}, {"s", 1.0},
	{"min", 60.0},   {"h", 3600.0},      {"d", 86400.0},  {NULL, 0},
};

static const struct suffix power_sfx[] = {
	{"", 1.0}, {"W", 1.0}, {"kW", 1e3}, {"MW", 1e6}, {NULL, 0},
};

static const struct suffix flops_sfx[] = {
	{"", 1.0},        {"FLOPS", 1.0},    {"GFLOPS", 1e9}, {"TFLOPS", 1e12},
	{"PFLOPS", 1e15}, {"FLOP/s", 1.0},   {"TFLOP/s", 1e12}, {NULL, 0},
};

static const struct suffix count_sfx[] = {
	{"", 1.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"G", 1e9}, {"T", 1e12}, {NULL, 0},
};

static const struct suffix usd_sfx[] = {
	{"", 1.0}, {"USD", 1.0}, {NULL, 0},
};

static const struct suffix *table_for(enum cfg_unit kind)
{
	switch (kind) {
	case CFG_U_SIZE:
		return size_sfx;
	case CFG_U_RATE:
		return rate_sfx;
	case CFG_U_TIME:
		return time_sfx;
	case CFG_U_POWER:
		return power_sfx;
	case CFG_U_FLOPS:
		return flops_sfx;
	case CFG_U_COUNT:
		return count_sfx;
	case CFG_U_USD:
		return usd_sfx;
	}
	return NULL;
}

const char *cfg_unit_suffixes(enum cfg_unit kind)
{
	switch (kind) {
	case CFG_U_SIZE:
		return "B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";
	case CFG_U_RATE:
		return "B/s, MB/s, GB/s, TB/s, MiB/s, GiB/s, Mb/s, Gb/s";
	case CFG_U_TIME:
		return "ns, us, ms, s, min, h, d";
	case CFG_U_POWER:
		return "W, kW, MW";
	case CFG_U_FLOPS:
		return "FLOPS, GFLOPS, TFLOPS, PFLOPS";
	case CFG_U_COUNT:
		return "k, M, B (10^9), T, or 1e9";
	case CFG_U_USD:
		return "$ or USD";
	}
	return "";
}

int cfg_parse_quantity(const char *s, enum cfg_unit kind, double *out, char *err, size_t errlen)
{
	const struct suffix *t = table_for(kind);
	const char *p = s;
	char *end;
	double v;

	if (!s || !*s) {
		snprintf(err, errlen, "empty value");
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (kind == CFG_U_USD && *p == '$')
		p++;
	if (*p == '-') {
		snprintf(err, errlen, "'%s' is negative", s);
		return -1;
	}
	/* strtod accepts "inf", "nan" and hex floats; only plain decimals are numbers here */
	if ((!isdigit((unsigned char)*p) && *p != '.') || (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))) {
		snprintf(err, errlen, "'%s' is not a number", s);
		return -1;
	}
	errno = 0;
	v = strtod(p, &end);
	if (end == p || errno == ERANGE || !isfinite(v)) {
		snprintf(err, errlen, "'%s' is not a number in range", s);
		return -1;
	}
	while (isspace((unsigned char)*end))
		end++;
	for (; t->name; t++) {
		if (strcmp(end, t->name) == 0) {
			v *= t->mult;
			if (!isfinite(v) || v > CFG_QTY_MAX) {
				snprintf(err, errlen, "'%s' is too large", s);
				return -1;
			}
			*out = v;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown unit '%s' in '%s' (allowed: %s)", end, s,
		 cfg_unit_suffixes(kind));
	return -1;
}

int cfg_parse_u64(const char *s, enum cfg_unit kind, uint64_t *out, char *err, size_t errlen)
{
	double v;

	if (cfg_parse_quantity(s, kind, &v, err, errlen) < 0)
		return -1;
	if (v != floor(v)) {
		snprintf(err, errlen, "'%s' is not a whole number", s);
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

/* v in the unit that suits ref (the largest step below |ref|), its digits by its own size. */
static char *fmt_scaled(double v, double ref, const char *const *names, double step, int nnames,
			char *buf, size_t n)
{
	int i = 0;
	double r = fabs(ref);

	while (r >= step && i < nnames - 1) {
		r /= step;
		v /= step;
		i++;
	}
	double a = fabs(v);
	if (i == 0 && v == floor(v))
		snprintf(buf, n, "%.0f %s", v, names[i]);
	else
		snprintf(buf, n, a >= 100 ? "%.0f %s" : a >= 10 ? "%.1f %s" : "%.2f %s", v,
			 names[i]);
	return buf;
}

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

char *cfg_fmt_bytes(double bytes, char *buf, size_t n)
{
	return fmt_scaled(bytes, bytes, byte_units, 1024.0, 6, buf, n);
}

char *cfg_fmt_bytes_as(double bytes, double ref, char *buf, size_t n)
{
	return fmt_scaled(bytes, ref, byte_units, 1024.0, 6, buf, n);
}

char *cfg_fmt_rate(double r, char *buf, size_t n)
{
	static const char *const names[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
	return fmt_scaled(r, r, names, 1000.0, 5, buf, n);
}

char *cfg_fmt_watts(double w, char *buf, size_t n)
{
	static const char *const names[] = {"W", "kW", "MW"};
	return fmt_scaled(w, w, names, 1000.0, 3, buf, n);
}

char *cfg_fmt_count(double c, char *buf, size_t n)
{
	static const char *const names[] = {"", "k", "M", "B", "T"};
	fmt_scaled(c, c, names, 1000.0, 5, buf, n);
	/* "123 " for plain counts: drop the trailing space */
	size_t len = strlen(buf);
	if (len && buf[len - 1] == ' ')
		buf[len - 1] = '\0';
	return buf;
}

char *cfg_fmt_seconds(double s, char *buf, size_t n)
{
	return cfg_fmt_seconds_as(s, s, buf, n);
}

char *cfg_fmt_seconds_as(double s, double ref, char *buf, size_t n)
{
	if (ref < 1e-3)
		snprintf(buf, n, "%.1f us", s * 1e6);
	else if (ref < 1.0)
		snprintf(buf, n, "%.0f ms", s * 1e3);
	else if (ref < 120.0)
		snprintf(buf, n, "%.2f s", s);
	else if (ref < 7200.0)
		snprintf(buf, n, "%.1f min", s / 60.0);
	else if (ref < 3 * 86400.0)
		snprintf(buf, n, "%.1f h", s / 3600.0);
	else
		snprintf(buf, n, "%.1f d", s / 86400.0);
	return buf;
}

char *cfg_fmt_usd(double usd, char *buf, size_t n)
{
	if (usd < 100.0)
		snprintf(buf, n, "$%.2f", usd);
	else {
		/* thousands separators for readability: $12,345 */
		char digits[64];
		snprintf(digits, sizeof digits, "%.0f", usd);
		size_t len = strlen(digits), j = 0;
		char tmp[96];
		tmp[j++] = '$';
		for (size_t i = 0; i < len && j < sizeof tmp - 2; i++) {
			tmp[j++] = digits[i];
			if ((len - i - 1) % 3 == 0 && i + 1 < len)
				tmp[j++] = ',';
		}
		tmp[j] = '\0';
		snprintf(buf, n, "%s", tmp);
	}
	return buf;
}

void cfg_wrap(FILE *fp, size_t col, size_t indent, size_t width, const char *text,
	      const char *sep)
{
	size_t seplen = strlen(sep), start = col;
	for (const char *p = text; *p;) {
		const char *at = strstr(p, sep);
		size_t n = at ? (size_t)(at - p) : strlen(p);
		/* the piece, and its separator less the trailing space when more follows */
		size_t mark = at ? seplen - 1 : 0;
		if (col > start && col + 1 + n + mark > width) {
			fprintf(fp, "\n%*s", (int)indent, "");
			col = start = indent;
		} else if (col > start) {
			fputc(' ', fp);
			col++;
		}
		fwrite(p, 1, n, fp);
		fwrite(sep, 1, mark, fp);
		col += n + mark;
		p += n + (at ? seplen : 0);
	}
	fputc('\n', fp);
}
