// Package agileredis enforces a global ceiling, shared by every instance of a
// service through Redis, in front of each instance's adaptive
// [agilelimiter.Limiter].
//
// The outbound limiters converge to fair shares of a dependency's capacity
// without talking to each other, but a provider's quota is global: twenty
// instances each promising MaxRate 100 to an API that allows 500 calls a
// second across the account exceed it at start and after every deploy. A
// [Gate] is the extra admission (agilelimiter.Config.Gate) that keeps them
// under it: the rate calls go out at is then the lower of the instance's
// adaptive rate and what the quota grants it.
//
// The quota is a generic cell rate algorithm (GCRA) on one Redis key: a
// timeline of slots 1/Rate apart. One Lua script, run atomically in one
// round trip, reads Redis's own clock (TIME, so the instances' clocks may
// disagree), reserves a batch of n consecutive slots at the end of the
// timeline and answers how long from now the first one comes; the instance
// then lets its callers out at those instants, 1/Rate apart, never as a
// burst. Every instance's sends therefore fall on a single global timeline,
// and no window of one second holds more than Rate calls but for the slots
// at its edges and the jitter of a round trip.
//
// When Redis is slow or down, a Gate sends its callers within one call's
// Timeout to a local pacer at a conservative ceiling (Rate/Instances). One
// late answer is a blip, over as soon as it comes; a failing call or a
// lasting silence is an outage, logged once, during which the gate asks
// Redis once a second in the background, and which ends at the first answer
// within Timeout. No caller waits on Redis past Timeout or past its
// context's deadline, ever.
//
// A Limiter asks its gate when a call's local slot is due, and sends the
// call at the gate's grant: the sends keep both spacings, whichever binds.
// docs/redis.md has the measurements and the limits of the guarantee.
package agileredis
