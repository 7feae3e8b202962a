/* Message channels (sbx.h) inside the library: wrapping a descriptor.
 * channel.c holds the rest. */
#ifndef SBX_API_CHANNEL_H_
#define SBX_API_CHANNEL_H_

#include "sbx/sbx.h"

/* A channel over fd, one end of a SOCK_SEQPACKET pair; the channel owns
 * it. Never NULL. */
sbx_channel *sbx_api_channel_wrap(int fd);

#endif /* SBX_API_CHANNEL_H_ */
