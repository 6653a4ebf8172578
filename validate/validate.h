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
	const char *accuracy;	/* a file for each category's band (configs/accuracy.json's
				 * layout), or NULL */
};

/* Every recorded case predicted against measured, per category, on out; A/B cases that failed
 * to run on log. EXIT_INFEASIBLE when a category passes its threshold or an A/B case failed. */
int val_validate(const struct val_validate_opts *o, FILE *out, FILE *log, char *err, size_t errlen);

/* validate --run LOG: a training run's log (and an nvidia-smi CSV) with the simulate flags
 * that describe it, recorded as cases of category user_runs in out (runlog.c). */
struct val_run_opts {
	const char *log, *smi, *out, *id;
	char **flags; /* simulate flags after "--": --flag value pairs */
	int nflags;
};
/* Parses the log, predicts the run once (checking the flags), prints measured against
 * predicted on out, and writes the cases into ro->out (merged by id into an existing file of
 * user runs). EXIT_OK, or the exit code with err naming the file or flag. */
int val_record_run(const struct val_run_opts *ro, FILE *out, char *err, size_t errlen);

/* Reads one file of recorded cases (or a calibration profile) without predicting: the checks
 * validate makes before it runs anything. 0 ok with the case count, -1 + err (fuzzing, tests). */
int val_trace_check(const char *text, const char *path, int *ncases, char *err, size_t errlen);

/* A scenario matrix read from its files: each name (checked: it names a golden file, unique)
 * with its simulate flags. add parses one file's text (path names it) and keeps it; 0 ok, -1 +
 * err. */
#define VAL_MAX_SCENARIOS 4096
struct cJSON;
struct val_scenario {
	const char *name;
	const struct cJSON *flags;
};
struct val_scenarios {
	struct val_scenario *v;
	int n, cap;
	struct cJSON **roots;
	int nroots;
};
int val_scenarios_add(struct val_scenarios *s, const char *text, const char *path, char *err,
		      size_t errlen);
void val_scenarios_free(struct val_scenarios *s);

/* Recomputes every scenario under sdir and compares it with its golden under gdir (update:
 * rewrites the goldens instead). Mismatches and the summary on out, failed scenarios on log. */
int val_regress(const char *sdir, const char *gdir, bool update, FILE *out, FILE *log, char *err,
		size_t errlen);

#endif
