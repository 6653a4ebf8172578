/* fuzz_profile — libFuzzer target: a calibrated profile applied to the catalog H100 and host. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_text.h"
#include "../../model/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct mdl_hw hw = {0};
	hw.gpu.bf16_flops = 989e12; /* the catalog H100 dense peak, so gemm_flops has a base */
	(void)mdl_profile_parse(text, "fuzz", &hw, err, sizeof err);
	free(text);
	return 0;
}
