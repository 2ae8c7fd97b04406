// jpeglib.h needs stdio.h and stddef.h first.
#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <jerror.h>
