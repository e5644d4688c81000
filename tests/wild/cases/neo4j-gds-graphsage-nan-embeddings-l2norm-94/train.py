UNWIND range(0,49) as i
WITH collect('embedding_' + toString(i)) as embeddings
CALL gds.beta.graphSage.train('train',{
modelName:'proteinModel',
aggregator:'mean',
activationFunction:'relu',
epochs:10,
sampleSizes:[75,25],
featureProperties:embeddings})
YIELD modelInfo
RETURN modelInfo

CALL gds.beta.graphSage.stream('train', {modelName:'proteinModel'})
YIELD nodeId, embedding
WITH embedding
WHERE any(x in embedding WHERE x <> x)
RETURN * LIMIT 5
