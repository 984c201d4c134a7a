/* cio_hints_arg.c: -H k=v,k=v as MPI_Info entries (cio_hints_arg.h). */
#include <string.h>

#include "cio_hints_arg.h"

void cio_hints_arg(char *hints, MPI_Info info)
{
	char *save = NULL;

	for (char *kv = strtok_r(hints, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (eq) {
			*eq = 0;
			MPI_Info_set(info, kv, eq + 1);
		}
	}
}
