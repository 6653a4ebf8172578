/* test_units — unit parsing and formatting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/units.h"
#include "tests.h"

static void parses_sizes_rates_times_in_base_units(void)
{
	static const struct {
		const char *s;
		enum cfg_unit u;
		double want;
	} ok[] = {
		{"80GiB", CFG_U_SIZE, 85899345920.0},
		{"2TB", CFG_U_SIZE, 2e12},
		{"512", CFG_U_SIZE, 512},
		{"1.5 TiB", CFG_U_SIZE, 1.5 * 1099511627776.0},
		{"25GB/s", CFG_U_RATE, 25e9},
		{"400Gb/s", CFG_U_RATE, 50e9},
		{"64GiB/s", CFG_U_RATE, 64.0 * 1073741824.0},
		{"3.5us", CFG_U_TIME, 3.5e-6},
		{"2h", CFG_U_TIME, 7200},
		{"700W", CFG_U_POWER, 700},
		{"1.2kW", CFG_U_POWER, 1200},
		{"989.4TFLOPS", CFG_U_FLOPS, 989.4e12},
		{"100M", CFG_U_COUNT, 1e8},
		{"2B", CFG_U_COUNT, 2e9},
		{"1e9", CFG_U_COUNT, 1e9},
		{"$30000", CFG_U_USD, 30000},
	};
	char err[128];
	double v;

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		CU_ASSERT_EQUAL_FATAL(cfg_parse_quantity(ok[i].s, ok[i].u, &v, err, sizeof err), 0);
		CU_ASSERT_DOUBLE_EQUAL(v, ok[i].want, ok[i].want * 1e-12);
	}
}

static void rejects_bad_numbers_and_units_with_a_message(void)
{
	static const struct {
		const char *s;
		enum cfg_unit u;
		const char *says;
	} bad[] = {
		{"", CFG_U_SIZE, "empty"},
		{"-5GB", CFG_U_SIZE, "negative"},
		{"80GX", CFG_U_SIZE, "unknown unit"},
		{"25GB", CFG_U_RATE, "unknown unit"}, /* a size is not a rate */
		{"nan", CFG_U_COUNT, "not a number"},
		{"inf", CFG_U_SIZE, "not a number"},
		{"0x10", CFG_U_SIZE, "not a number"},
		{"1e400", CFG_U_SIZE, "range"},
		{"9e18", CFG_U_COUNT, "too large"},
		{"abc", CFG_U_TIME, "not a number"},
	};
	char err[128];
	double v;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(cfg_parse_quantity(bad[i].s, bad[i].u, &v, err, sizeof err), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].says));
	}
}

static void whole_numbers_only_where_counts_are_expected(void)
{
	uint64_t u;
	char err[128];

	CU_ASSERT_EQUAL(cfg_parse_u64("4096", CFG_U_COUNT, &u, err, sizeof err), 0);
	CU_ASSERT_EQUAL(u, 4096);
	CU_ASSERT_EQUAL(cfg_parse_u64("1.5", CFG_U_COUNT, &u, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "whole"));
}

static void formats_human_units(void)
{
	char b[32];

	CU_ASSERT_STRING_EQUAL(cfg_fmt_bytes(85899345920.0, b, sizeof b), "80.0 GiB");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_bytes(512, b, sizeof b), "512 B");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_seconds(0.25, b, sizeof b), "250 ms");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_seconds(7200 * 2, b, sizeof b), "4.0 h");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_watts(8420, b, sizeof b), "8.42 kW");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_usd(1234567, b, sizeof b), "$1,234,567");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_count(70553706496.0, b, sizeof b), "70.6 B");
	/* a range's end in its value's unit: 7032 s beside 2.1 h is 1.95 h (alone 117.2 min);
	 * 1.2 GiB beside 1000 MiB is 1228.8 MiB */
	CU_ASSERT_STRING_EQUAL(cfg_fmt_seconds_as(7032, 7560, b, sizeof b), "2.0 h");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_seconds(7032, b, sizeof b), "117.2 min");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_seconds_as(0.95, 1.2, b, sizeof b), "0.95 s");
	CU_ASSERT_STRING_EQUAL(cfg_fmt_bytes_as(1.2 * 1073741824.0, 1000 * 1048576.0, b, sizeof b),
			       "1229 MiB");
}

/* cfg_wrap, solved by hand: "aa bb cc dd" from column 2 within 8 columns breaks after "bb"
 * (2 + "aa bb" = 7; " cc" would reach 10) and "cc dd" fits the indented line (3 + 5 = 8); ", "
 * keeps its comma; a piece longer than a line stands alone on its own. */
static void wraps_words_and_lists_within_the_width(void)
{
	static const struct {
		size_t col, indent, width;
		const char *text, *sep, *want;
	} c[] = {
		{2, 3, 8, "aa bb cc dd", " ", "aa bb\n   cc dd\n"},
		{0, 2, 9, "one, two, three", ", ", "one, two,\n  three\n"},
		{4, 4, 6, "abcdefgh ij", " ", "abcdefgh\n    ij\n"},
		{0, 0, 120, "", " ", "\n"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
		cfg_wrap(fp, c[i].col, c[i].indent, c[i].width, c[i].text, c[i].sep);
		fclose(fp);
		CU_ASSERT_STRING_EQUAL(buf, c[i].want);
		free(buf);
	}
}

int suite_units(void)
{
	static const struct test_case c[] = {
		{"parses_sizes_rates_times_in_base_units", parses_sizes_rates_times_in_base_units},
		{"rejects_bad_numbers_and_units_with_a_message",
		 rejects_bad_numbers_and_units_with_a_message},
		{"whole_numbers_only_where_counts_are_expected",
		 whole_numbers_only_where_counts_are_expected},
		{"formats_human_units", formats_human_units},
		{"wraps_words_and_lists_within_the_width", wraps_words_and_lists_within_the_width},
	};
	return add_suite("units", c, (int)(sizeof c / sizeof c[0]));
}
