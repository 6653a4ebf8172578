/* cmd_validate — `tierplan validate` and `tierplan regress`: flags in, validate/ does the work. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../validate/validate.h"
#include "cli.h"

int cmd_validate(int argc, char **argv)
{
	struct val_validate_opts o = {0};
	const char *format = "text";
	char err[512];

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf(
			    "usage: tierplan validate [--traces DIR]... [--thresholds FILE] "
			    "[--format text|json] [--report DIR [--force]]\n\n"
			    "Replays recorded measurements (default: traces/published and "
			    "traces/calibration) through the simulator and\nprints predicted "
			    "against measured per category with each category's MAPE; exit 1 when "
			    "a\ncategory exceeds its threshold (default: "
			    "validate/thresholds.json).\n");
			return EXIT_OK;
		}
		if (!strcmp(a, "--force")) {
			o.force = true;
			continue;
		}
		if (i + 1 >= argc) {
			snprintf(err, sizeof err, "%s: unknown option or missing value", a);
			return cli_fail(EXIT_USAGE, "validate", err);
		}
		const char *v = argv[++i];
		if (!strcmp(a, "--traces") && o.ndirs < VAL_MAX_TRACE_DIRS)
			o.dirs[o.ndirs++] = v;
		else if (!strcmp(a, "--thresholds"))
			o.thresholds = v;
		else if (!strcmp(a, "--format"))
			format = v;
		else if (!strcmp(a, "--report"))
			o.report = v;
		else {
			snprintf(err, sizeof err, "unknown option '%s'", a);
			return cli_fail(EXIT_USAGE, "validate", err);
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json"))
		return cli_fail(EXIT_INVALID, "validate",
				"--format: unknown format (allowed: text, json)");
	o.json = !strcmp(format, "json");
	int rc = val_validate(&o, stdout, stderr, err, sizeof err);
	return rc == EXIT_OK || rc == EXIT_INFEASIBLE ? rc : cli_fail(rc, "validate", err);
}

int cmd_regress(int argc, char **argv)
{
	const char *sdir = "tests/scenarios", *gdir = "tests/golden";
	bool update = false;
	char err[512];

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: tierplan regress [--scenarios DIR] [--golden DIR] "
			       "[--update]\n\n"
			       "Recomputes the scenario matrix and compares it with the stored "
			       "goldens: "
			       "counts and bytes\nexactly, times, power and costs within 0.5 %%. "
			       "--update rewrites the goldens.\n");
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "--update"))
			update = true;
		else if (!strcmp(argv[i], "--scenarios") && i + 1 < argc)
			sdir = argv[++i];
		else if (!strcmp(argv[i], "--golden") && i + 1 < argc)
			gdir = argv[++i];
		else {
			snprintf(err, sizeof err, "unknown option or missing value '%s'", argv[i]);
			return cli_fail(EXIT_USAGE, "regress", err);
		}
	}
	int rc = val_regress(sdir, gdir, update, stdout, stderr, err, sizeof err);
	return rc == EXIT_OK || rc == EXIT_INFEASIBLE ? rc : cli_fail(rc, "regress", err);
}
