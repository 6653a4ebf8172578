/* fuzz_deepspeed — libFuzzer target: a DeepSpeed ds_config.json read as simulate flags. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_text.h"
#include "../../sim/dsconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *text = fuzz_text(data, size);
	struct tp_ds ds;

	if (!text)
		return 0;
	(void)tp_ds_parse(text, "fuzz", &ds, err, sizeof err);
	free(text);
	return 0;
}
