vcl 4.1;

import std;
import xkey;

# Varnish in front of the archive's web processes (docs/operations.md, "The edge"): public API
# responses and /media/ images are kept for their s-maxage, and dropped by the PURGE requests
# catalog.edge sends after every change (EDGE_PURGE_BACKEND=http, EDGE_PURGE_URLS). Needs
# varnish-modules (Debian's package of that name) for xkey. Set the backend to the web service,
# and the purgers to the addresses the workers send from.

backend default {
    .host = "127.0.0.1";
    .port = "8000";
}

acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (!client.ip ~ purgers) {
            return (synth(405, "Not allowed"));
        }
        # The tags catalog.edge names (space-separated): every object carrying one goes, at
        # once and whole (not kept in grace). The count confirms the purge ran here.
        set req.http.X-Purged = xkey.purge(req.http.xkey-purge);
        return (synth(200, "Purged"));
    }
    # Editors, crawlers and anything with credentials go straight through.
    if (req.url !~ "^/(api/v1|media)/" || req.http.Authorization) {
        return (pass);
    }
    if (req.url ~ "^/media/") {
        # One spelling per image: a query string names nothing, and any other spelling of a
        # key's path is refused rather than cached beside the real one, where a purge by path
        # would miss it: an empty, "." or ".." segment, a backslash, an escape of a character
        # that needs none (%65 for "e", %2F for "/"), or an escape that is lower-case or not
        # one. catalog.storage's keys and the stores' URLs never have any of these.
        set req.url = regsub(req.url, "\?.*$", "");
        if (req.url ~ "//|/\.\.?(/|$)|\\|%(?![0-9A-F]{2})|%(2[D-F]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])") {
            return (synth(404, "Not Found"));
        }
    }
    # The public API and images are the same for everyone: a browser's cookies (the admin's
    # session on the same host) must not make each visitor a cache of their own.
    unset req.http.Cookie;
}

sub vcl_hash {
    # The scheme is part of the key: a response built for http:// (its URLs, a redirect to
    # https://) is never served to an https:// client, nor the other way.
    hash_data(req.http.X-Forwarded-Proto);
}

sub vcl_synth {
    if (req.method == "PURGE") {
        set resp.http.X-Purged = req.http.X-Purged;
    }
}

sub vcl_backend_response {
    # The tags the origin gave the response, for xkey.purge.
    if (beresp.http.Surrogate-Key) {
        set beresp.http.xkey = beresp.http.Surrogate-Key;
    }
    # A redirect is not kept: it depends on the scheme the client came by, and carries no
    # Cache-Control of its own.
    if (beresp.status >= 300 && beresp.status < 400) {
        set beresp.ttl = 0s;
        set beresp.grace = 0s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    # Grace: a page whose s-maxage ran out is served while its next version is fetched, only
    # when the origin says how long (X-Edge-Grace: lists, never a page whose album expires).
    # Whatever is withdrawn is purged whole, grace included.
    if (beresp.http.X-Edge-Grace ~ "^[0-9]+$") {
        set beresp.grace = std.duration(beresp.http.X-Edge-Grace + "s", 0s);
    } else {
        set beresp.grace = 0s;
    }
}

sub vcl_deliver {
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
    unset resp.http.X-Edge-Grace;
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
}
