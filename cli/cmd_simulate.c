/* cmd_simulate — `tierplan simulate`: one exact configuration through the discrete-event
 * simulator; a text summary, JSON of DESIGN.md, a CSV row as `sweep` writes it, or Markdown;
 * --trace writes a Chrome trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reports/report.h"
#include "cli.h"
#include "../sim/engine.h"
#include "../sim/opts.h"
#include "../sim/plan.h"

static void help(FILE *fp)
{
	fprintf(fp, "usage: tierplan simulate --model M --seq S [--gpus N --tp T --pp P --dp D "
		    "--zero Z] [--policy P] [options]\n\n"
		    "Plays one training step of one configuration forward in time on the machine's\n"
		    "resources and reports peak memory per tier, step time, power, energy and flash\n"
		    "writes. Policies: %s.\n\noptions:\n",
		sim_policy_names());
	tp_opts_help(CMD_SIMULATE, fp);
	fprintf(fp, "\nexample: tierplan simulate --model 70b --seq 4096 --gpus 1 --policy tiered "
		    "--dram 256GiB --trace step.json\n");
}

int cmd_simulate(int argc, char **argv)
{
	struct tp_opts o;
	struct sim_workload *w = calloc(1, sizeof *w);
	struct mdl_hw hw;
	struct sim_econ econ;
	struct sim_option res;
	struct eng *e = eng_new();
	char err[1024], path[4096], name[96]; /* room for the model types an error lists */
	int rc;

	if (!w || !e) {
		rc = cli_fail(EXIT_SYSTEM, "simulate", "out of memory");
		goto out;
	}
	rc = tp_opts_parse(CMD_SIMULATE, argc, argv, 2, &o, err, sizeof err);
	if (rc < 0) {
		rc = cli_fail(rc == -2 ? EXIT_USAGE : EXIT_INVALID, "simulate", err);
		goto out;
	}
	if (o.help) {
		help(stdout);
		rc = EXIT_OK;
		goto out;
	}
	static const struct {
		const char *name;
		void (*render)(FILE *, const struct rpt_sim *);
	} formats[] = {{"text", rpt_sim_text}, {"json", rpt_sim_json}, {"csv", rpt_sim_csv},
		       {"md", rpt_sim_md}};
	void (*render)(FILE *, const struct rpt_sim *) = NULL;
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (strcmp(o.format, formats[i].name) == 0)
			render = formats[i].render;
	if (!render) {
		rc = cli_fail(EXIT_INVALID, "simulate",
			      "--format: unknown format (allowed: text, json, csv, md)");
		goto out;
	}
	struct sim_config c;
	rc = tp_inputs(&o, w, &hw, &econ, name, sizeof name, path, sizeof path, err, sizeof err);
	if (!rc)
		rc = tp_sim_config(&o, w, &c, err, sizeof err);
	if (rc) {
		rc = cli_fail(rc, "simulate", err);
		goto out;
	}
	tp_warn_inputs("simulate", &o, w, &hw);
	/* the user's --zero (a host-tier policy's own stage needs no note) */
	if (tp_opts_given(&o, "zero") && c.layout.zero > 0 &&
	    c.layout.dp * mdl_layout_cp(&c.layout) == 1)
		fprintf(stderr, "tierplan simulate: note: --zero %u has no effect with one "
				"data-parallel rank\n", c.layout.zero);
	if (sim_run(e, w, &hw, &econ, &c, &res, err, sizeof err)) {
		rc = cli_fail(EXIT_INVALID, "simulate", err);
		goto out;
	}
	struct rpt_sim r = {name, path, w, &hw, &econ, &c, &res, e};
	int wrc = o.trace ? rpt_sim_trace(o.trace, &r, err, sizeof err) : 0;
	if (wrc) {
		rc = cli_fail(cli_out_code(wrc), "simulate", err);
		goto out;
	}
	render(stdout, &r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rc = cli_fail(EXIT_SYSTEM, "simulate", "cannot write the result to standard output");
		goto out;
	}
	rc = res.fits ? EXIT_OK : EXIT_INFEASIBLE;
out:
	eng_free(e);
	free(w);
	return rc;
}
