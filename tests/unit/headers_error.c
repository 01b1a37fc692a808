/* <nvmefs/error.h> must compile first and alone, and survive a second include. */
#include <nvmefs/error.h>
#include <nvmefs/error.h>

#include <stddef.h>

size_t headers_error_size(void);

size_t headers_error_size(void)
{
	return sizeof(&nvmefs_errmsg);
}
