/*
 * validate — recorded measurements replayed through the simulator (validate.c) and the golden
 * scenario matrix (regress.c): the two ways tierplan checks its own predictions.
 *
 * Both take their inputs as plain values and write their tables to the stream they are given;
 * the command line (cli/cmd_validate.c, cli/cmd_regress.c) parses flags and owns stdout. They
 * return a status of sim/opts.h: EXIT_OK, EXIT_INFEASIBLE when a check failed (the failures are
 * on log), EXIT_INVALID for a malformed input file and EXIT_SYSTEM for I/O, both with err naming
 * the file.
 */
#ifndef TIERPLAN_VALIDATE_H
#define TIERPLAN_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define VAL_MAX_TRACE_DIRS 4

struct val_validate_opts {
	const char *dirs[VAL_MAX_TRACE_DIRS]; /* recorded measurements; none = traces/published and
					       * traces/calibration beside the configs */
	int ndirs;
	const char *thresholds; /* NULL = validate/thresholds.json beside the configs */
	bool json;		/* the table as JSON instead of text */
	const char *report;	/* a directory for the charts, or NULL */
	bool force;		/* the report directory may hold other files */
};

/* Every recorded case predicted against measured, per category, on out; A/B cases that failed
 * to run on log. EXIT_INFEASIBLE when a category passes its threshold or an A/B case failed. */
int val_validate(const struct val_validate_opts *o, FILE *out, FILE *log, char *err, size_t errlen);

/* Recomputes every scenario under sdir and compares it with its golden under gdir (update:
 * rewrites the goldens instead). Mismatches and the summary on out, failed scenarios on log. */
int val_regress(const char *sdir, const char *gdir, bool update, FILE *out, FILE *log, char *err,
		size_t errlen);

#endif
