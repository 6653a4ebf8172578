/* fuzz_units — libFuzzer target: quantities with units ("80GiB", "25GB/s", "3.5us") of every
 * kind, as doubles and as 64-bit counts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../model/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], *s = malloc(size + 1);
	double v;
	uint64_t u;
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	for (int k = CFG_U_SIZE; k <= CFG_U_USD; k++) {
		(void)cfg_parse_quantity(s, (enum cfg_unit)k, &v, err, sizeof err);
		(void)cfg_parse_u64(s, (enum cfg_unit)k, &u, err, sizeof err);
	}
	free(s);
	return 0;
}
