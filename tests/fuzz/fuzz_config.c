/* fuzz_config — libFuzzer target: a Hugging Face config.json through the reader, then the
 * accounting that multiplies its sizes (parameter counts, model states, activations, FLOPs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../model/act.h"
#include "../../model/arch.h"
#include "../../model/job.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mdl_arch a;
	char err[256], *json = fuzz_text(data, size);
	if (!json)
		return 0;
	if (mdl_arch_parse(json, "fuzz", &a, err, sizeof err) == 0) {
		struct mdl_counts c;
		struct mdl_states s;
		struct mdl_job j = {MDL_LORA, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_FULL,
				    MDL_ATTN_EAGER, 4096, 4};
		mdl_arch_counts(&a, &c);
		mdl_job_states(&a, &j, &s);
		(void)mdl_act_total(&a, &j);
		(void)mdl_job_hardware_flops(&a, &j);
	}
	free(json);
	return 0;
}
