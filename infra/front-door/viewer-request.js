// The admission webhook's front door: a CloudFront Function (runtime cloudfront-js-2.0) on
// the viewer-request event of the distribution in front of the webhook's function URL.
// It answers every call that is not a registered cluster's webhook route itself, at the
// edge, so an unauthenticated flood never takes a slot of the function's reserved
// concurrency (docs/admission.md, "The front door").
//
// A call passes when its path is /clusters/<id>/<token>/validate/<route> and the key value
// store holds, under `cluster/<id>`, the hex SHA-256 of <token>: one digest, or two
// separated by a space while a key rotation moves the cluster to its new token. The store
// holds digests, not tokens: reading it grants nothing. Deleting a cluster's entry revokes
// that cluster alone; the function behind checks the token again against the webhook key.
//
// The local control plane runs this same file in front of its webhook (local/front-door.ts).
import cf from 'cloudfront';
import crypto from 'crypto';

var ROUTE = /^\/clusters\/([A-Za-z0-9._~%-]{1,253})\/([A-Za-z0-9_-]{43})\/validate\/(inferenceservice|controllerrevision)\/?$/;

function refuse(statusCode, statusDescription) {
  return { statusCode: statusCode, statusDescription: statusDescription, headers: { 'cache-control': { value: 'no-store' } } };
}

async function handler(event) {
  var request = event.request;
  var match = ROUTE.exec(request.uri);
  if (!match) return refuse(403, 'Forbidden');
  if (request.method !== 'POST') return refuse(405, 'Method Not Allowed');
  var clusterId;
  try {
    clusterId = decodeURIComponent(match[1]);
  } catch (e) {
    return refuse(400, 'Bad Request');
  }
  var expected;
  try {
    expected = await cf.kvs().get('cluster/' + clusterId);
  } catch (e) {
    // No entry: a cluster never registered here, or revoked.
    return refuse(403, 'Forbidden');
  }
  var presented = crypto.createHash('sha256').update(match[2]).digest('hex');
  if (expected.split(' ').indexOf(presented) === -1) return refuse(403, 'Forbidden');
  return request;
}
