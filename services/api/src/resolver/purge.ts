// The purges of the caching proxy in front of the resolver (CACHE_PURGE_URL) are transport machinery: @mint/http's.
export { createCachePurger, type CachePurger } from '@mint/http';
