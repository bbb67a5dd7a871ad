// Starts Swagger UI on /api/docs/. The page's template loads the Swagger UI bundle (served from this app, never a
// CDN) and passes what this script needs in data-* attributes and a JSON block, so no script is inline.
const container = document.getElementById("swagger-ui");
const settingsBlock = document.getElementById("swagger-settings");

if (container && typeof window.SwaggerUIBundle === "function") {
  const { schemaUrl, csrfHeader, csrfToken } = container.dataset;
  const settings = settingsBlock ? JSON.parse(settingsBlock.textContent) : {};

  // The API takes the session cookie; a write from "Try it out" also needs the CSRF token.
  const requestInterceptor = (request) => {
    const method = (request.method || "GET").toUpperCase();
    if (!["GET", "HEAD", "OPTIONS"].includes(method) && csrfHeader && csrfToken) {
      request.headers[csrfHeader] = csrfToken;
    }
    return request;
  };

  window.ui = window.SwaggerUIBundle({
    url: schemaUrl,
    dom_id: "#swagger-ui",
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor,
    ...settings,
  });
}
