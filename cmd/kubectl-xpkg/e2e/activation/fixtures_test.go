package activation

// The shared fixtures (the provider, Compositions, policies) are in
// e2e/internal/acme; these are this package's own.

// unknownInput is the function-input kind of a function the plan does not
// know, and unknownStep a step that uses it.
const unknownInput = "Blueprint.blueprint.fn.acme.example.org"

const unknownStep = `  - step: blueprint
    functionRef:
      name: function-acme-blueprint
    input:
      apiVersion: blueprint.fn.acme.example.org/v1alpha1
      kind: Blueprint
      spec:
        size: small
        tier: gold
`
