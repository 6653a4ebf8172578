/* cmd_plan — `tierplan plan`: resolve the inputs, run the sizing search, render. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reports/report.h"
#include "catalog.h"
#include "cli.h"
#include "opts.h"
#include "plan.h"

static void help(FILE *fp)
{
	fprintf(fp, "usage: tierplan plan --model M --seq S [job options] [hardware options]\n\n"
		    "Sizes a fine-tuning job: the fewest GPUs that fit it GPU-only, and the fewest\n"
		    "when model states live in host DRAM and flash instead, with step time, runtime,\n"
		    "peak power, energy, cost and flash wear for each.\n\noptions:\n");
	tp_opts_help(CMD_PLAN, fp);
	fprintf(fp, "\nexample: tierplan plan --model 70b --seq 4096 --format json\n");
}

int cmd_plan(int argc, char **argv)
{
	struct tp_opts o;
	struct sim_workload *w = NULL;
	struct sim_hw hw;
	struct sim_econ econ;
	struct sim_plan *p = NULL;
	struct sim_plan_req req;
	char err[512], path[4096], name[96];
	int rc;

	rc = tp_opts_parse(CMD_PLAN, argc, argv, 2, &o, err, sizeof err);
	if (rc < 0)
		return cli_fail(rc == -2 ? EXIT_USAGE : EXIT_INVALID, "plan", err);
	if (o.help) {
		help(stdout);
		return EXIT_OK;
	}
	if (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "csv") &&
	    strcmp(o.format, "md"))
		return cli_fail(EXIT_INVALID, "plan",
				"--format: unknown format (allowed: text, json, csv, md)");

	w = calloc(1, sizeof *w);
	p = calloc(1, sizeof *p);
	if (!w || !p) {
		rc = cli_fail(EXIT_SYSTEM, "plan", "out of memory");
		goto out;
	}
	rc = tp_inputs(CMD_PLAN, &o, w, &hw, &econ, name, sizeof name, path, sizeof path);
	if (rc)
		goto out;
	req = (struct sim_plan_req){(uint32_t)o.max_gpus, o.recompute >= 0};

	if (sim_plan_run(w, &hw, &econ, &req, p, err, sizeof err) < 0) {
		rc = cli_fail(EXIT_INVALID, "plan", err);
		goto out;
	}
	struct rpt_plan r = {name,
			     path,
			     w,
			     &hw,
			     &econ,
			     p,
			     o.recompute < 0,
			     !tp_opts_given(&o, "global-batch") && !tp_opts_given(&o, "grad-accum"),
			     !tp_opts_given(&o, "tokens") && !tp_opts_given(&o, "epochs")};
	if (strcmp(o.format, "json") == 0)
		rpt_plan_json(stdout, &r);
	else if (strcmp(o.format, "csv") == 0)
		rpt_plan_csv(stdout, &r);
	else if (strcmp(o.format, "md") == 0)
		rpt_plan_md(stdout, &r);
	else
		rpt_plan_text(stdout, &r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rc = cli_fail(EXIT_SYSTEM, "plan", "cannot write the report to standard output");
		goto out;
	}
	rc = p->rec_gpu_only < 0 && p->rec_tiered < 0 ? EXIT_INFEASIBLE : EXIT_OK;
out:
	free(w);
	free(p);
	return rc;
}
