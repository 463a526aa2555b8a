// Swagger UI over /openapi.json, from files served by Horarium itself (no CDN, no validator
// badge). "Authorize" takes an API key as the bearer token; it is kept in this page only.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
