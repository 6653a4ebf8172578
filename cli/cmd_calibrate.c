/* cmd_calibrate — `tierplan calibrate`: flags in, validate/calibrate measures and writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/arch.h"
#include "../model/catalog.h"
#include "../model/units.h"
#include "../validate/calibrate.h"
#include "cli.h"

static void help(FILE *fp)
{
	const char *what;

	fprintf(fp,
		"usage: tierplan calibrate [--quick] [--dir DIR] [--out FILE] [--tests LIST]\n"
		"                          [--device DEV --destroy-data] [--cuda-helper PATH]\n"
		"                          [--gpu-index N] [--test-timeout S]\n"
		"                          [--flash-fill SIZE] [--model NAME|PATH]\n\n"
		"Measures this machine and writes a hardware profile that plan, compare and\n"
		"simulate use with --profile FILE. Tests (waived with a reason when their\n"
		"hardware or tool is absent):\n");
	for (int i = 0; i < cal_test_count(); i++) {
		const char *name = cal_test_name(i, &what);
		fprintf(fp, "  %-20s %s\n", name, what);
	}
	fprintf(fp,
		"\noptions:\n"
		"  --quick            short runs (seconds per test)\n"
		"  --dir DIR          where fio writes its test file (default: a new temporary "
		"directory)\n"
		"  --out FILE         the profile (default: profile.json)\n"
		"  --tests LIST       comma-separated test names (default: all)\n"
		"  --device DEV       fio on a raw device instead, with --destroy-data\n"
		"  --cuda-helper PATH the CUDA harness (default: tierplan-cuda beside tierplan)\n"
		"  --gpu-index N      the GPU to measure, in CUDA's device order (PCI bus order: the\n"
		"                     helper sets CUDA_DEVICE_ORDER=PCI_BUS_ID) [default 0]\n"
		"  --test-timeout S   seconds a CUDA test may run before it is killed and reported\n"
		"                     failed; the CUDA tests after it then fail unrun, the rest\n"
		"                     still run and the profile is written [default %d]\n"
		"  --flash-fill SIZE  flash_slc_fill writes SIZE in one stream under --dir (on\n"
		"                     the drive: e.g. 400GB, more than a consumer drive's SLC\n"
		"                     cache) and finds where its write rate drops, and the rate\n"
		"                     past it; the profile carries both (16MiB to 100TB; it\n"
		"                     wears the drive, so the test is waived without it)\n"
		"  --model NAME|PATH  the GEMM tests at this dense model's decoder layer (4096\n"
		"                     tokens) instead of Llama-3.1-8B's: a GPU at its power cap\n"
		"                     runs large GEMMs at lower clocks (an H200: 0.68 of its peak\n"
		"                     at 70B and 405B layers, 0.75 at 8B), so the rate holds\n"
		"                     best for the model it was measured at\n",
		CAL_TEST_TIMEOUT);
}

/* The GEMM tests' layer from a dense model (--model): 0, or an exit code with err filled. */
static int gemm_shape_of(const char *arg, int shape[4], char *err, size_t errlen)
{
	char path[1024], name[128], e2[384];
	struct mdl_arch a;
	if (cfg_model_resolve(arg, path, sizeof path, name, sizeof name, e2, sizeof e2) ||
	    mdl_arch_load(path, &a, e2, sizeof e2)) {
		snprintf(err, errlen, "--model: %s", e2);
		return EXIT_INVALID;
	}
	uint64_t kv = a.kv_heads * a.head_dim;
	if (a.experts > 0 || a.q_lora_rank > 0 || a.kv_lora_rank > 0) {
		snprintf(err, errlen,
			 "--model: %s has %s; the GEMM tests time a dense decoder layer (q, k, v, o "
			 "and a gated MLP, every token through each): give a dense model",
			 name, a.experts > 0 ? "experts" : "latent attention (MLA)");
		return EXIT_INVALID;
	}
	/* the helper's bounds (bin/tierplan-cuda --shape) */
	if (a.hidden < CAL_SHAPE_MIN || a.hidden > CAL_SHAPE_MAX_HIDDEN || kv < CAL_SHAPE_MIN ||
	    kv > a.hidden || a.intermediate < CAL_SHAPE_MIN ||
	    a.intermediate > CAL_SHAPE_MAX_INTER || a.hidden % CAL_SHAPE_ALIGN ||
	    kv % CAL_SHAPE_ALIGN || a.intermediate % CAL_SHAPE_ALIGN) {
		snprintf(err, errlen,
			 "--model: %s's layer (hidden %llu, k/v width %llu, MLP width %llu) is "
			 "outside what the GEMM tests run: hidden 64-65536, k/v 64-hidden, MLP "
			 "64-262144, each a multiple of 16 (the FP8 GEMMs' granularity)",
			 name, (unsigned long long)a.hidden, (unsigned long long)kv,
			 (unsigned long long)a.intermediate);
		return EXIT_INVALID;
	}
	shape[0] = 4096;
	shape[1] = (int)a.hidden;
	shape[2] = (int)kv;
	shape[3] = (int)a.intermediate;
	return 0;
}

int cmd_calibrate(int argc, char **argv)
{
	struct cal_opts o = {0};
	char err[512];

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--quick")) {
			o.quick = true;
		} else if (!strcmp(a, "--destroy-data")) {
			o.destroy = true;
		} else if (i + 1 < argc && !strcmp(a, "--dir")) {
			o.dir = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--out")) {
			o.out = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--tests")) {
			o.tests = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--device")) {
			o.device = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--cuda-helper")) {
			o.cuda_helper = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--gpu-index")) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || v < 0 || v > 63) {
				snprintf(err, sizeof err, "--gpu-index: '%s' is not a device index 0 to 63",
					 argv[i]);
				return cli_fail(EXIT_INVALID, "calibrate", err);
			}
			o.gpu_index = (int)v;
		} else if (i + 1 < argc && !strcmp(a, "--flash-fill")) {
			double v;
			char e2[256];
			if (cfg_parse_quantity(argv[++i], CFG_U_SIZE, &v, e2, sizeof e2) ||
			    v < 16.0 * 1048576 || v > 100e12) {
				snprintf(err, sizeof err,
					 "--flash-fill: '%s' is not a size from 16MiB to 100TB "
					 "(e.g. 400GB)",
					 argv[i]);
				return cli_fail(EXIT_INVALID, "calibrate", err);
			}
			o.fill = v;
		} else if (i + 1 < argc && !strcmp(a, "--model")) {
			int rc = gemm_shape_of(argv[++i], o.gemm_shape, err, sizeof err);
			if (rc)
				return cli_fail(rc, "calibrate", err);
		} else if (i + 1 < argc && !strcmp(a, "--test-timeout")) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || v < 1 || v > 3600) {
				snprintf(err, sizeof err,
					 "--test-timeout: '%s' is not a number of seconds 1 to 3600",
					 argv[i]);
				return cli_fail(EXIT_INVALID, "calibrate", err);
			}
			o.test_timeout = (int)v;
		} else {
			static const char *const known[] = {
				"--dir",       "--out",        "--tests",        "--device",
				"--cuda-helper", "--gpu-index", "--flash-fill", "--test-timeout",
				"--model",     "--quick",      "--destroy-data", NULL};
			return cli_bad_arg("calibrate", a, known, NULL);
		}
	}
	int rc = cal_run(&o, stderr, err, sizeof err);
	return rc == EXIT_OK || rc == EXIT_INFEASIBLE ? rc : cli_fail(rc, "calibrate", err);
}
