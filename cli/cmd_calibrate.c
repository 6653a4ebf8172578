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
	if (cfg_model_resolve(arg, path, sizeof path, name, sizeof name, NULL, e2, sizeof e2) ||
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
	/* options with a value, then the two flags */
	enum { FIO_DIR, OUT, TESTS, DEVICE, CUDA_HELPER, GPU_INDEX, FLASH_FILL, TEST_TIMEOUT, MODEL,
	       QUICK, DESTROY_DATA, NOPTS };
	static const char *const known[NOPTS + 1] = {
		[FIO_DIR] = "--dir", [OUT] = "--out", [TESTS] = "--tests", [DEVICE] = "--device",
		[CUDA_HELPER] = "--cuda-helper", [GPU_INDEX] = "--gpu-index",
		[FLASH_FILL] = "--flash-fill", [TEST_TIMEOUT] = "--test-timeout",
		[MODEL] = "--model", [QUICK] = "--quick", [DESTROY_DATA] = "--destroy-data"};

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return EXIT_OK;
		}
		int k = cli_option(a, known);
		if (k == QUICK || k == DESTROY_DATA) {
			*(k == QUICK ? &o.quick : &o.destroy) = true;
			continue;
		}
		if (k < 0 || i + 1 >= argc)
			return cli_bad_arg("calibrate", a, known, NULL);
		const char *v = argv[++i];
		char *end;
		long n;
		switch (k) {
		case FIO_DIR:
			o.dir = v;
			break;
		case OUT:
			o.out = v;
			break;
		case TESTS:
			o.tests = v;
			break;
		case DEVICE:
			o.device = v;
			break;
		case CUDA_HELPER:
			o.cuda_helper = v;
			break;
		case GPU_INDEX:
			n = strtol(v, &end, 10);
			if (*end || end == v || n < 0 || n > 63) {
				snprintf(err, sizeof err, "--gpu-index: '%s' is not a device index 0 to 63",
					 v);
				return cli_fail(EXIT_INVALID, "calibrate", err);
			}
			o.gpu_index = (int)n;
			break;
		case FLASH_FILL: {
			char e2[256];
			if (cfg_parse_quantity(v, CFG_U_SIZE, &o.fill, e2, sizeof e2) ||
			    o.fill < 16.0 * 1048576 || o.fill > 100e12) {
				snprintf(err, sizeof err,
					 "--flash-fill: '%s' is not a size from 16MiB to 100TB "
					 "(e.g. 400GB)",
					 v);
				return cli_fail(EXIT_INVALID, "calibrate", err);
			}
			break;
		}
		case MODEL: {
			int rc = gemm_shape_of(v, o.gemm_shape, err, sizeof err);
			if (rc)
				return cli_fail(rc, "calibrate", err);
			break;
		}
		case TEST_TIMEOUT:
			n = strtol(v, &end, 10);
			if (*end || end == v || n < 1 || n > 3600) {
				snprintf(err, sizeof err,
					 "--test-timeout: '%s' is not a number of seconds 1 to 3600",
					 v);
				return cli_fail(EXIT_INVALID, "calibrate", err);
			}
			o.test_timeout = (int)n;
			break;
		}
	}
	int rc = cal_run(&o, stderr, err, sizeof err);
	return rc == EXIT_OK || rc == EXIT_INFEASIBLE ? rc : cli_fail(rc, "calibrate", err);
}
