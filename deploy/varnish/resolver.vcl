# Varnish in front of the resolver (test/resolver-cache.test.ts runs this file against the API).
#
# - Caches what the resolver marks cacheable (GTIN and lot answers and linksets: Cache-Control
#   s-maxage with a Surrogate-Key); every unit answer and refusal says no-store and is fetched.
# - PURGE with a Surrogate-Key header (CACHE_PURGE_URL of the API) bans every object carrying that
#   key; only from the purgers below.
# - Logs each cache hit's X-Scan header (std.log "scan:") for the log shipper (varnishncsa with
#   -q 'VCL_Log:scan' -F '%{Varnish:vxid}x %{%s}t %{VCL_Log:scan}x' | mintctl scans ship-log);
#   misses reach the resolver, which records them itself, so each scan is counted once.
# - No grace: a stale object served while a background fetch runs would be counted twice (the
#   hit in the log, the fetch by the resolver).
#
# BACKEND_HOST and BACKEND_PORT are replaced before the file is loaded.
vcl 4.1;

import std;

backend resolver {
  .host = "BACKEND_HOST";
  .port = "BACKEND_PORT";
}

acl purgers {
  "127.0.0.1";
  "::1";
}

sub vcl_recv {
  if (req.method == "PURGE") {
    if (client.ip !~ purgers) {
      return (synth(405, "Not allowed"));
    }
    if (req.http.Surrogate-Key !~ "^[A-Za-z0-9-]+$") {
      return (synth(400, "One Surrogate-Key of letters, digits and dashes"));
    }
    # No space in the expression: ban() splits its arguments at spaces.
    ban("obj.http.Surrogate-Key ~ (^|\s)" + req.http.Surrogate-Key + "(\s|$)");
    return (synth(200, "Purged"));
  }
}

sub vcl_backend_response {
  set beresp.grace = 0s;
  set beresp.keep = 0s;
}

sub vcl_deliver {
  if (obj.hits > 0 && resp.http.X-Scan) {
    std.log("scan:" + resp.http.X-Scan);
  }
  unset resp.http.X-Scan;
  unset resp.http.Surrogate-Key;
}
