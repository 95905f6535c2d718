vcl 4.1;

# Varnish in front of the archive's web processes (docs/operations.md, "The edge"): public API
# responses and /media/ images are kept for their s-maxage, and dropped by the BAN requests
# catalog.edge sends after every change (EDGE_PURGE_BACKEND=http, EDGE_PURGE_URLS). Set the
# backend to the web service, and the purgers to the addresses the workers send from.

backend default {
    .host = "127.0.0.1";
    .port = "8000";
}

acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "BAN") {
        if (!client.ip ~ purgers) {
            return (synth(405, "Not allowed"));
        }
        # Regular expressions catalog.edge builds: over the Surrogate-Key header of cached
        # responses (records, brands, kinds), and over the paths of cached images.
        if (req.http.X-Ban-Tags) {
            ban("obj.http.Surrogate-Key ~ " + req.http.X-Ban-Tags);
        }
        if (req.http.X-Ban-Paths) {
            ban("obj.http.X-Url ~ " + req.http.X-Ban-Paths);
        }
        return (synth(200, "Banned"));
    }
    # Editors, crawlers and anything with credentials go straight through.
    if (req.url !~ "^/(api/v1|media)/" || req.http.Authorization) {
        return (pass);
    }
    # The public API and images are the same for everyone: a browser's cookies (the admin's
    # session on the same host) must not make each visitor a cache of their own.
    unset req.http.Cookie;
}

sub vcl_backend_response {
    # The path, on the object: bans by path are then matched by the ban lurker too.
    set beresp.http.X-Url = bereq.url;
}

sub vcl_deliver {
    unset resp.http.X-Url;
    unset resp.http.Surrogate-Key;
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
}
