// Text imports (`with { type: "text" }`) of SQL migrations and page assets.
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.html" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/*" {
  const path: string;
  export default path;
}
