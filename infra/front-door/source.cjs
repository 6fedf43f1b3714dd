// serverless.yml takes the front door function's code from here
// (`${file(infra/front-door/source.cjs):viewerRequest}`): osls requires a .js file as a
// module, so the CloudFront Function's source is handed over as text.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

module.exports = { viewerRequest: readFileSync(join(__dirname, 'viewer-request.js'), 'utf8') };
