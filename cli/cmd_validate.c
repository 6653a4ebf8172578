/* cmd_validate — `tierplan validate` and `tierplan regress`: flags in, validate/ does the work. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../validate/validate.h"
#include "cli.h"

int cmd_validate(int argc, char **argv)
{
	struct val_validate_opts o = {0};
	struct val_run_opts run = {0};
	const char *format = "text";
	char err[512];
	enum { TRACES, THRESHOLDS, FORMAT, REPORT, ACCURACY, RUN, SMI, OUT, ID, FORCE, NOPTS };
	static const char *const known[NOPTS + 1] = {
		[TRACES] = "--traces", [THRESHOLDS] = "--thresholds", [FORMAT] = "--format",
		[REPORT] = "--report", [ACCURACY] = "--accuracy", [RUN] = "--run", [SMI] = "--smi",
		[OUT] = "--out", [ID] = "--id", [FORCE] = "--force"};

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf(
			    "usage: tierplan validate [--traces DIR]... [--thresholds FILE] "
			    "[--format text|json] [--report DIR [--force]]\n"
			    "                         [--accuracy FILE]\n"
			    "       tierplan validate --run LOG [--smi CSV] --out FILE [--id NAME] "
			    "-- SIMULATE FLAGS\n\n"
			    "Replays recorded measurements (default: traces/published and "
			    "traces/calibration) through the simulator and\nprints predicted "
			    "against measured per category with each category's MAPE and bias (the "
			    "mean signed\nerror, positive where the predictions are optimistic: "
			    "faster, or less memory, than\nmeasured); exit 1 when a category "
			    "exceeds its threshold (default: validate/thresholds.json).\n"
			    "--accuracy FILE writes each category's band, what 90 %% of its runs "
			    "measured over what\nwas predicted (configs/accuracy.json's layout: "
			    "plan, compare and simulate print it).\n\n"
			    "--run records a training run of your own: the step time (Megatron-LM's "
			    "elapsed time per\niteration, DeepSpeed's RunningAvgSamplesPerSec, the "
			    "Trainer's train_steps_per_second, torchtune's\ntokens_per_second_per_gpu) "
			    "and peak memory (max allocated; or the largest memory.used of an\n"
			    "nvidia-smi CSV given with --smi) of LOG, with the simulate flags after "
			    "--, as cases of\ncategory user_runs in FILE (merged by id, default the "
			    "log's name); it prints measured against\npredicted. Replay them with "
			    "--traces DIR.\n");
			return EXIT_OK;
		}
		if (!strcmp(a, "--")) { /* the simulate flags of a --run */
			run.flags = argv + i + 1;
			run.nflags = argc - i - 1;
			break;
		}
		int k = cli_option(a, known);
		if (k == FORCE) {
			o.force = true;
			continue;
		}
		if (k < 0 || i + 1 >= argc)
			return cli_bad_arg("validate", a, known, "--traces");
		const char *v = argv[++i];
		switch (k) {
		case TRACES:
			if (o.ndirs == VAL_MAX_TRACE_DIRS) {
				snprintf(err, sizeof err, "--traces: at most %d directories",
					 VAL_MAX_TRACE_DIRS);
				return cli_fail(EXIT_USAGE, "validate", err);
			}
			o.dirs[o.ndirs++] = v;
			break;
		case THRESHOLDS:
			o.thresholds = v;
			break;
		case FORMAT:
			format = v;
			break;
		case REPORT:
			o.report = v;
			break;
		case ACCURACY:
			o.accuracy = v;
			break;
		case RUN:
			run.log = v;
			break;
		case SMI:
			run.smi = v;
			break;
		case OUT:
			run.out = v;
			break;
		case ID:
			run.id = v;
			break;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json"))
		return cli_fail(EXIT_INVALID, "validate",
				"--format: unknown format (allowed: text, json)");
	if (run.log || run.flags) {
		if (!run.log || !run.out || !run.nflags)
			return cli_fail(EXIT_USAGE, "validate",
					"--run LOG needs --out FILE and the run's simulate flags after "
					"--");
		if (!run.id) { /* the log's file name */
			const char *b = strrchr(run.log, '/');
			run.id = b ? b + 1 : run.log;
		}
		int rc = val_record_run(&run, stdout, err, sizeof err);
		return rc == EXIT_OK ? rc : cli_fail(rc, "validate", err);
	}
	o.json = !strcmp(format, "json");
	int rc = val_validate(&o, stdout, stderr, err, sizeof err);
	return rc == EXIT_OK || rc == EXIT_INFEASIBLE ? rc : cli_fail(rc, "validate", err);
}

int cmd_regress(int argc, char **argv)
{
	const char *sdir = "tests/scenarios", *gdir = "tests/golden";
	enum { SCENARIOS, GOLDEN, UPDATE, NOPTS };
	static const char *const known[NOPTS + 1] = {
		[SCENARIOS] = "--scenarios", [GOLDEN] = "--golden", [UPDATE] = "--update"};
	bool update = false;
	char err[512];

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: tierplan regress [--scenarios DIR] [--golden DIR] "
			       "[--update]\n\n"
			       "Recomputes the scenario matrix and compares it with the stored "
			       "goldens: "
			       "counts and bytes\nexactly, times, power and costs within 0.5 %%. "
			       "--update rewrites the goldens.\n"
			       "Defaults: --scenarios tests/scenarios, --golden tests/golden (a "
			       "directory that must exist).\n");
			return EXIT_OK;
		}
		int k = cli_option(argv[i], known);
		if (k == UPDATE)
			update = true;
		else if (k >= 0 && i + 1 < argc)
			*(k == SCENARIOS ? &sdir : &gdir) = argv[++i];
		else
			return cli_bad_arg("regress", argv[i], known, "--scenarios");
	}
	int rc = val_regress(sdir, gdir, update, stdout, stderr, err, sizeof err);
	return rc == EXIT_OK || rc == EXIT_INFEASIBLE ? rc : cli_fail(rc, "regress", err);
}
