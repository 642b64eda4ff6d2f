// The pages' one way to the server's JSON API: a failed request throws an ApiError with the server's message
// and the request field it names.

class ApiError extends Error {
  constructor(message, status, field) { super(message); this.status = status; this.field = field || ""; }
}

export async function api(method, url, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  const r = await fetch(url, init);
  if (!r.ok) {
    let msg = `${r.status} ${r.statusText}`, field = "";
    try {
      const j = await r.json();
      field = j.field || "";
      msg = typeof j.detail === "string" ? j.detail
        : (j.detail || []).map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
    } catch (_) { /* not JSON */ }
    throw new ApiError(msg, r.status, field);
  }
  return r;
}
