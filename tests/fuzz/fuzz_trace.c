/* fuzz_trace — libFuzzer target: a file of recorded measurements (traces/) or a calibration profile
 * through validate's reader: everything it checks before predicting. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_text.h"
#include "../../validate/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *text = fuzz_text(data, size);
	if (!text)
		return 0;
	int n;
	(void)val_trace_check(text, "fuzz", &n, err, sizeof err);
	free(text);
	return 0;
}
