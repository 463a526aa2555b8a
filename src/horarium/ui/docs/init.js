// Swagger UI over /openapi.json, from files served by Horarium itself (no CDN, no validator
// badge). "Authorize" takes an API key as the bearer token; it is kept in this page only.
// Every operation's api-version field comes filled with the version the dashboard speaks: the
// page fills it in its own copy of the document (the API still requires the parameter).
const API_VERSION = "2016-03-01";

function withApiVersion(document) {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation?.parameters ?? []) {
        if (parameter.name === "api-version" && parameter.schema) {
          parameter.schema.default = API_VERSION;
        }
      }
    }
  }
  return document;
}

async function start() {
  const response = await fetch("/openapi.json", { credentials: "omit" });
  window.ui = SwaggerUIBundle({
    spec: withApiVersion(await response.json()),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
}

start();
