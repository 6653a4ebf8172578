/* cmd_plan — `tierplan plan` and `tierplan compare`: resolve the inputs, run the search,
 * render. compare is the same search at exactly the GPU counts asked for, every count shown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../reports/report.h"
#include "../model/catalog.h"
#include "cli.h"
#include "../sim/opts.h"
#include "../sim/plan.h"

static void help(FILE *fp, bool compare)
{
	if (compare)
		fprintf(fp, "usage: tierplan compare --model M --seq S [--gpus 1,2,4,8,16] [options]\n\n"
			    "GPU-only and tiered side by side at each GPU count: memory per tier, step\n"
			    "time, runtime, peak power, energy and cost.\n\noptions:\n");
	else
		fprintf(fp, "usage: tierplan plan --model M --seq S [job options] [hardware options]\n\n"
			    "Sizes a fine-tuning job: GPU-only layouts from the fewest GPUs that fit, and\n"
			    "options that keep model state in host DRAM and flash instead, with step time,\n"
			    "runtime, peak power, energy, cost and flash wear; recommends the best by\n"
			    "--objective within --deadline and --budget.\n\noptions:\n");
	tp_opts_help(compare ? CMD_COMPARE : CMD_PLAN, fp);
	fprintf(fp, "\nexample: tierplan %s --model 70b --seq 4096 --format json\n",
		compare ? "compare" : "plan");
}

/* "1,2,4,8" -> counts; -1 + err naming --gpus. */
static int parse_counts(const char *s, uint32_t *out, int max, int *n, char *err, size_t errlen)
{
	*n = 0;
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s || v < 1 || v > SIM_PLAN_MAX_GPUS || *n == max || (*end && *end != ',')) {
			snprintf(err, errlen, "--gpus: expected up to %d counts from 1 to %d separated by "
					      "commas, got '%s'",
				 max, SIM_PLAN_MAX_GPUS, s);
			return -1;
		}
		out[(*n)++] = (uint32_t)v;
		s = *end ? end + 1 : end;
	}
	if (*n == 0) {
		snprintf(err, errlen, "--gpus: give at least one GPU count");
		return -1;
	}
	return 0;
}

static int run(int argc, char **argv, bool compare)
{
	const char *cmd = compare ? "compare" : "plan";
	int cmdbit = compare ? CMD_COMPARE : CMD_PLAN;
	uint32_t counts[16];
	int ncounts = 0;
	struct tp_opts o;
	struct sim_workload *w = NULL;
	struct mdl_hw hw;
	struct sim_econ econ;
	struct sim_plan *p = NULL;
	struct sim_plan_req req;
	char err[1024], path[4096], name[96]; /* room for the model types an error lists */
	int rc;

	rc = tp_opts_parse(cmdbit, argc, argv, 2, &o, err, sizeof err);
	if (rc < 0)
		return cli_fail(rc == -2 ? EXIT_USAGE : EXIT_INVALID, cmd, err);
	if (o.help) {
		help(stdout, compare);
		return EXIT_OK;
	}
	memset(&req, 0, sizeof req);
	if (sim_objective_parse(o.objective, &req.objective, err, sizeof err) < 0 ||
	    (compare && parse_counts(o.gpu_list, counts, 16, &ncounts, err, sizeof err) < 0))
		return cli_fail(EXIT_INVALID, cmd, err);
	if (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "csv") &&
	    strcmp(o.format, "md"))
		return cli_fail(EXIT_INVALID, cmd,
				"--format: unknown format (allowed: text, json, csv, md)");
	/* flags that only qualify another: alone they would do nothing */
	if (tp_opts_given(&o, "option") && !o.emit)
		return cli_fail(EXIT_USAGE, cmd,
				"--option picks the option --emit writes: add --emit DIR");
	if (o.force && !o.report && !o.emit)
		return cli_fail(EXIT_USAGE, cmd,
				compare ? "--force lets --report write into a non-empty directory: "
					  "add --report DIR"
					: "--force lets --report or --emit write into a non-empty "
					  "directory: add one of them");

	w = calloc(1, sizeof *w);
	p = calloc(1, sizeof *p);
	if (!w || !p) {
		rc = cli_fail(EXIT_SYSTEM, cmd, "out of memory");
		goto out;
	}
	rc = tp_inputs(&o, w, &hw, &econ, name, sizeof name, path, sizeof path, err, sizeof err);
	if (rc) {
		rc = cli_fail(rc, cmd, err);
		goto out;
	}
	tp_warn_inputs(cmd, &o, w, &hw);
	struct sim_config framework = {0};
	rc = tp_framework_config(&o, w, &framework, err, sizeof err);
	if (rc) {
		rc = cli_fail(rc, cmd, err);
		goto out;
	}
	/* torchtune steps the optimizer in backward only without gradient accumulation */
	if (framework.opt_in_bwd && w->grad_accum != 1) {
		rc = cli_fail(EXIT_INVALID, cmd,
			      "--optimizer-in-backward yes steps each gradient as backward makes "
			      "it, so a step is one micro-batch: give --grad-accum 1 (torchtune "
			      "requires gradient_accumulation_steps 1 with optimizer_in_bwd)");
		goto out;
	}
	req.framework = &framework;
	req.max_gpus = (uint32_t)o.max_gpus;
	req.tier_nodes = (uint32_t)o.tier_nodes;
	if (req.tier_nodes > 1 && !(hw.host.network_per_gpu > 0)) {
		snprintf(err, sizeof err,
			 "--tier-nodes %u: host %s has no network, so its host tiers stay on one "
			 "node (--host " CFG_HOST_STAND_IN " plans a cluster)",
			 req.tier_nodes, hw.host.name);
		rc = cli_fail(EXIT_INVALID, cmd, err);
		goto out;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	req.threads = o.threads ? (uint32_t)o.threads
		      : cpus > 1 ? (uint32_t)cpus
				 : 1; /* the search bounds it */
	req.recompute_fixed = o.recompute >= 0;
	req.loss_fixed = o.loss >= 0;
	req.batch_fixed = tp_opts_given(&o, "batch");
	req.dram_fixed = tp_opts_given(&o, "dram");
	req.flash_fixed = tp_opts_given(&o, "flash") && (strchr(o.flash, ':') || !hw.flash_count);
	/* --deepspeed: its policy, ZeRO stage and parameter placement bound the search (its
	 * buckets, buffers, overlap and clipping are the framework's settings above) */
	req.zero = -1;
	for (int i = 0; o.deepspeed && i < o.ds.n; i++) {
		if (!strcmp(o.ds.set[i].flag, "policy"))
			req.policy = o.ds.set[i].value;
		else if (!strcmp(o.ds.set[i].flag, "zero"))
			req.zero = atoi(o.ds.set[i].value);
	}
	/* zero3-offload as --offload-param (or the config) says, else both ways */
	req.params_fixed = req.policy || tp_opts_given(&o, "offload-param");
	req.params_on_gpu = !strcmp(o.offload_param, "no");
	/* Twin-Flow's ratio as given (or the config's), else searched beside each zero3-offload
	 * option with the parameters on the GPUs */
	req.ratio_fixed = req.policy || tp_opts_given(&o, "offload-ratio");
	if (o.offload_ratio < 1 && req.params_fixed && !req.params_on_gpu) {
		snprintf(err, sizeof err,
			 "--offload-ratio %g keeps part of zero3-offload's optimizer on the GPUs, "
			 "which needs the parameters there too: --offload-param no",
			 o.offload_ratio);
		rc = cli_fail(EXIT_INVALID, cmd, err);
		goto out;
	}
	bool mp;
	if (tp_yes_no("--model-parallel", o.model_parallel, &mp, err, sizeof err)) {
		rc = cli_fail(EXIT_INVALID, cmd, err);
		goto out;
	}
	req.dp_only = !mp;
	req.deadline = o.deadline;
	req.budget = o.budget;
	if (compare) {
		/* the default counts stop at what a host without a network holds (one node); counts
		 * the user gave are theirs, and sim_run says why one cannot be */
		if (!tp_opts_given(&o, "gpus") && !(hw.host.network_per_gpu > 0)) {
			int n = 0;
			for (int i = 0; i < ncounts; i++)
				if (counts[i] <= hw.gpus_per_node)
					counts[n++] = counts[i];
			ncounts = n;
		}
		/* and go on, doubling, to the GPUs of the nodes --tier-nodes lets the host tiers
		 * span (16 default counts at most) */
		if (!tp_opts_given(&o, "gpus") && req.tier_nodes > 1) {
			uint32_t reach = hw.gpus_per_node * req.tier_nodes;
			for (uint32_t c = 2 * counts[ncounts - 1]; c < reach && ncounts < 15; c *= 2)
				counts[ncounts++] = c;
			if (counts[ncounts - 1] < reach)
				counts[ncounts++] = reach;
		}
		req.counts = counts;
		req.ncounts = ncounts;
	}

	if (sim_plan_run(w, &hw, &econ, &req, p, err, sizeof err) < 0) {
		rc = cli_fail(EXIT_INVALID, cmd, err);
		goto out;
	}
	struct rpt_plan r = {name,
			     path,
			     cmd,
			     w,
			     &hw,
			     &econ,
			     &req,
			     p,
			     o.recompute < 0,
			     !tp_opts_given(&o, "global-batch") &&
				     !tp_opts_given(&o, "grad-accum") && !o.ds.derive,
			     !tp_opts_given(&o, "tokens") && !tp_opts_given(&o, "epochs"),
			     !req.batch_fixed,
			     o.loss < 0,
			     tp_opts_given(&o, "max-gpus"),
			     o.wide,
			     tp_opts_given(&o, "epochs") ? o.epochs : 0};
	int wrc = o.report ? rpt_plan_report(o.report, o.force, &r, err, sizeof err) : 0;
	if (!wrc && o.emit) {
		int idx = tp_opts_given(&o, "option") ? (int)o.option : p->rec_best;
		if (idx < 0) {
			rc = cli_fail(EXIT_INFEASIBLE, cmd, "--emit: no option fits, nothing to emit");
			goto out;
		}
		char files[192]; /* the files written, and a warning where the run overflows */
		wrc = rpt_plan_emit(o.emit, o.force, &r, idx, files, sizeof files, err, sizeof err);
		if (!wrc)
			fprintf(stderr, "tierplan %s: wrote option %d to %s (%s)\n", cmd, idx, o.emit,
				files);
	}
	if (wrc) {
		rc = cli_fail(cli_out_code(wrc), cmd, err);
		goto out;
	}
	if (strcmp(o.format, "json") == 0)
		rpt_plan_json(stdout, &r);
	else if (strcmp(o.format, "csv") == 0)
		rpt_plan_csv(stdout, &r);
	else if (strcmp(o.format, "md") == 0)
		rpt_plan_md(stdout, &r);
	else
		rpt_plan_text(stdout, &r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rc = cli_fail(EXIT_SYSTEM, cmd, "cannot write the report to standard output");
		goto out;
	}
	/* infeasible: nothing fits, or nothing meets --deadline and --budget (the report names
	 * the fastest instead) */
	rc = p->rec_best < 0 || !p->deadline_met ? EXIT_INFEASIBLE : EXIT_OK;
out:
	free(w);
	free(p);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	return run(argc, argv, false);
}

int cmd_compare(int argc, char **argv)
{
	return run(argc, argv, true);
}
